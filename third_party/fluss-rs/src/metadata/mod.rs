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

mod acl;
mod cluster_health;
mod config;
mod data_lake_format;
mod database;
mod datatype;
mod goal_type;
mod json_serde;
mod kv_snapshot;
mod kv_snapshot_lease;
mod lake_snapshot;
mod partition;
mod producer_offsets;
mod rebalance;
mod register_producer_result;
mod remote_log;
mod schema_util;
mod server_tag;
mod table;
mod table_change;
mod table_stats;

pub use acl::*;
pub use cluster_health::*;
pub use config::*;
pub use data_lake_format::*;
pub use database::*;
pub use datatype::*;
pub use goal_type::*;
pub use json_serde::*;
pub use kv_snapshot::*;
pub use kv_snapshot_lease::*;
pub use lake_snapshot::*;
pub use partition::*;
pub use producer_offsets::*;
pub use rebalance::*;
pub use register_producer_result::*;
pub use remote_log::*;
pub(crate) use schema_util::{UNEXIST_MAPPING, index_mapping};
pub use server_tag::*;
pub use table::*;
pub use table_change::*;
pub use table_stats::*;
