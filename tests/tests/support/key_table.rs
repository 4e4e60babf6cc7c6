//! The idempotency key table in moto's DynamoDB (partition key `pk`), shaped as
//! docs/idempotency.md says: one definition for the idempotency suite and write-bodies-bench
//! (`#[path]`-included there: examples have no library of their own with the AWS SDK).

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
};

/// Creates the key table `name` through `client`.
pub async fn create_key_table(client: &aws_sdk_dynamodb::Client, name: &str) -> Result<(), String> {
    let pk = "pk";
    let attribute = AttributeDefinition::builder()
        .attribute_name(pk)
        .attribute_type(ScalarAttributeType::S);
    let key = KeySchemaElement::builder()
        .attribute_name(pk)
        .key_type(KeyType::Hash);
    client
        .create_table()
        .table_name(name)
        .attribute_definitions(attribute.build().map_err(|e| e.to_string())?)
        .key_schema(key.build().map_err(|e| e.to_string())?)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .map_err(|e| format!("creating {name} in moto: {e}"))?;
    Ok(())
}
