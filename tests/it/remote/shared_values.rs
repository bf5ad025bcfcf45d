//! Issue 39, item 7 on object storage: a long output is written once in
//! the state object too (the same writer as a local file).

use super::runs::{hub, pulled};
use super::server::server;
use crate::shared_values::{blob, stack};

#[test]
fn a_1_mib_output_is_stored_once_in_the_bucket_and_reads_back_whole() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("shared-values");
    let location = format!("s3://{bucket}/hub.state");
    let test = stack();
    hub(&test, server, &["deploy", "hub.yaml", "-s", &location], &[]).success();
    let object = server.get(&bucket, "hub.state").expect("the state object");
    assert!(
        object.len() <= 1_300_000,
        "the state object holds the output more than once: {} bytes",
        object.len()
    );
    let blob = blob();
    assert_eq!(object.matches(blob.as_str()).count(), 1);
    let state = pulled(&test, server, &location);
    let stack_output = state["stackOutputs"][0]["value"].as_str();
    assert!(
        stack_output == Some(blob.as_str()),
        "the stack output reads back whole"
    );
    let parameters = state["components"]["app"]["parameters"]
        .as_sequence()
        .expect("app's parameters");
    let parameter = parameters
        .iter()
        .find(|p| p["name"].as_str() == Some("app.blob"))
        .and_then(|p| p["value"].as_str());
    assert!(
        parameter == Some(blob.as_str()),
        "app's parameter reads back whole"
    );
}
