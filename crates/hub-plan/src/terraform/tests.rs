use super::*;
use hub_params::Origin;
use serde_json::json;

fn param(name: &str, value: &str) -> ExpandedParam {
    ExpandedParam {
        name: name.into(),
        value: Some(yaml_serde::from_str(value).expect("yaml")),
        env: String::new(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    }
}

#[test]
fn parameters_become_tf_vars_and_backend_configuration() {
    let base = vec![
        ("PATH".to_string(), "/bin".to_string()),
        ("TF_VAR_name".to_string(), "from-env".to_string()),
    ];
    let params = [
        param("name", "ignored"),
        param("vpc.cidr-block", "10.0.0.0/16"),
        param("subnets", "[a, b]"),
        param("terraform.backend.bucket", "it's"),
        param("terraform.backend.key", "net/terraform.tfstate"),
        param("terraform.binary", "/opt/tofu"),
    ];
    let env = environment(base, &params);
    let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    assert_eq!(get("TF_VAR_name"), Some("from-env"));
    assert_eq!(get("TF_VAR_vpc_cidr_block"), Some("10.0.0.0/16"));
    assert_eq!(get("TF_VAR_subnets"), Some(r#"["a","b"]"#));
    assert_eq!(
        get("TF_CLI_ARGS_init"),
        Some(r#"'-backend-config=bucket=it'\''s' '-backend-config=key=net/terraform.tfstate'"#)
    );
    assert_eq!(get("HUB_TERRAFORM_BINARY"), Some("/opt/tofu"));
    assert!(!env.iter().any(|(k, _)| k.starts_with("TF_VAR_terraform")));
}

#[test]
fn outputs_json_is_read_with_sensitivity() {
    let text = r#"{"b":{"sensitive":true,"type":"string","value":"s3cret"},
                  "a":{"sensitive":false,"type":["list","string"],"value":["x"]}}"#;
    let outputs = parse_outputs_json(text).expect("json");
    assert_eq!(
        outputs,
        [
            TfOutput {
                name: "a".into(),
                value: json!(["x"]),
                sensitive: false
            },
            TfOutput {
                name: "b".into(),
                value: json!("s3cret"),
                sensitive: true
            },
        ]
    );
    assert_eq!(
        parse_outputs_json("[]").expect_err("array"),
        "not a JSON object"
    );
}

#[test]
fn the_outputs_file_is_taken_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(take_outputs(dir.path()).is_none());
    std::fs::create_dir_all(dir.path().join(".terraform")).expect("mkdir");
    std::fs::write(dir.path().join(OUTPUTS_FILE), "{}").expect("write");
    assert_eq!(take_outputs(dir.path()), Some(Ok(Vec::new())));
    assert!(take_outputs(dir.path()).is_none());
}

#[test]
fn a_missing_program_says_what_to_do() {
    let error = find_binary(Some("/nonexistent/terraform")).expect_err("missing");
    assert_eq!(
        error,
        "the Terraform program `/nonexistent/terraform` (from parameter `terraform.binary`) was not \
         found or is not executable; install Terraform or OpenTofu so that `terraform` or `tofu` is on \
         the PATH, or name the program with the component parameter `terraform.binary` or the \
         environment variable `HUB_TERRAFORM`"
    );
    assert_eq!(
        find_binary(Some("/bin/sh")).expect("found"),
        PathBuf::from("/bin/sh")
    );
}
