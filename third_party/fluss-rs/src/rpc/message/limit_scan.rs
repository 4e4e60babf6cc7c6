// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

use crate::proto::LimitScanResponse;
use crate::rpc::frame::ReadError;

use crate::rpc::api_key::ApiKey;
use crate::rpc::frame::WriteError;
use crate::rpc::message::{ReadType, RequestBody, WriteType};
use crate::{BucketId, PartitionId, TableId, impl_read_type, impl_write_type, proto};
use prost::Message;

use bytes::{Buf, BufMut};

pub struct LimitScanRequest {
    pub(crate) inner_request: proto::LimitScanRequest,
}

impl LimitScanRequest {
    pub fn new(
        table_id: TableId,
        partition_id: Option<PartitionId>,
        bucket_id: BucketId,
        limit: i32,
    ) -> Self {
        let request = proto::LimitScanRequest {
            table_id,
            partition_id,
            bucket_id,
            limit,
            routing_bucket_count: None,
        };

        Self {
            inner_request: request,
        }
    }
}

impl RequestBody for LimitScanRequest {
    type ResponseBody = LimitScanResponse;

    const API_KEY: ApiKey = ApiKey::LimitScan;
}

impl_write_type!(LimitScanRequest);
impl_read_type!(LimitScanResponse);
