//! The boxed `Parameter` against the plain struct it replaced: same reading
//! (values, unknown-key paths, errors), same writing, same `Debug` text.

use super::*;
use proptest::prelude::*;

/// The struct as it was before the rare fields moved behind a box.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    rename = "Parameter",
    rename_all = "camelCase",
    expecting = "struct Parameter"
)]
struct Plain {
    name: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    component: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    kind: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    description: String,
    #[serde(skip_serializing_if = "is_null")]
    default: Option<Value>,
    #[serde(skip_serializing_if = "is_null")]
    value: Option<Value>,
    #[serde(skip_serializing_if = "is_empty_str")]
    empty: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    from_env: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    from_file: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    env: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<Plain>,
}

/// Reads a list both ways: the values written back, the `Debug` texts with
/// the type names aside, the unknown keys' paths and the error, if any.
fn both(text: &str) -> [(String, String, Vec<String>); 2] {
    fn read<T: serde::de::DeserializeOwned + Serialize + std::fmt::Debug>(
        text: &str,
    ) -> (String, String, Vec<String>) {
        let mut unknown = Vec::new();
        let document = yaml_serde::Deserializer::from_str(text);
        let read: Result<Vec<T>, _> =
            serde_ignored::deserialize(document, |path| unknown.push(path.to_string()));
        match read {
            Ok(list) => (
                yaml_serde::to_string(&list).expect("a parameter list is written"),
                format!("{list:?}").replace("Plain {", "Parameter {"),
                unknown,
            ),
            Err(error) => (format!("error: {error}"), String::new(), unknown),
        }
    }
    [read::<Plain>(text), read::<Parameter>(text)]
}

#[test]
fn reads_writes_and_shows_as_the_plain_struct() {
    for text in [
        "- name: a\n  value: 1\n",
        "- name: a\n  component: c\n  kind: user\n  brief: B\n  description: D\n  default: 2\n  value: ~\n  empty: allow\n  fromEnv: E\n  fromFile: f\n  env: V\n",
        "- name: g\n  parameters:\n  - name: x\n    typo: 1\n    parameters:\n    - name: y\n      brief: deep\n",
        "- name: a\n  default: null\n  brief: ''\n",
        "- name: a\n  unknown: {b: 1}\n  type: string\n",
        "- name: a\n  parameters: 3\n",
        "- 7\n",
        "- name: [1]\n",
    ] {
        let [plain, boxed] = both(text);
        assert_eq!(plain, boxed, "{text}");
    }
}

#[test]
fn the_box_is_there_only_when_a_rare_field_is_set() {
    let read: Vec<Parameter> = yaml_serde::from_str(
        "- {name: a, value: 1, env: A}\n- {name: b, default: null}\n- {name: c, empty: allow}\n",
    )
    .expect("parameters are read");
    assert!(read[0].rare.is_none());
    assert!(read[1].rare.is_none());
    assert_eq!(read[2].empty(), "allow");
    let mut emptied = read[2].clone();
    emptied.rare_mut().empty.clear();
    assert_eq!(
        emptied,
        Parameter {
            name: "c".into(),
            ..Parameter::default()
        }
    );
    emptied.shrink_to_fit();
    assert!(emptied.rare.is_none());
}

fn field() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z]{1,3}"]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("~".to_string()),
        Just("''".to_string()),
        "[0-9]{1,2}",
        "[a-z]{1,3}"
    ]
}

/// A parameter's text, with each key present or not, and a few nested.
fn parameter(depth: u32) -> BoxedStrategy<String> {
    let keys = (
        field(),
        field(),
        field(),
        field(),
        proptest::option::of(value()),
        proptest::option::of(value()),
        field(),
        field(),
        field(),
        field(),
        proptest::option::of("[a-z]{1,3}"),
    );
    let nested = if depth == 0 {
        Just(Vec::new()).boxed()
    } else {
        proptest::collection::vec(parameter(depth - 1), 0..3).boxed()
    };
    (keys, nested)
        .prop_map(
            |(
                (
                    component,
                    kind,
                    brief,
                    description,
                    default,
                    value,
                    empty,
                    from_env,
                    from_file,
                    env,
                    unknown,
                ),
                nested,
            )| {
                let mut text = "{name: n".to_string();
                for (key, field) in [
                    ("component", component),
                    ("kind", kind),
                    ("brief", brief),
                    ("description", description),
                    ("empty", empty),
                    ("fromEnv", from_env),
                    ("fromFile", from_file),
                    ("env", env),
                ] {
                    if !field.is_empty() {
                        text.push_str(&format!(", {key}: {field}"));
                    }
                }
                for (key, value) in [("default", default), ("value", value), ("unknown", unknown)] {
                    if let Some(value) = value {
                        text.push_str(&format!(", {key}: {value}"));
                    }
                }
                if !nested.is_empty() {
                    text.push_str(&format!(", parameters: [{}]", nested.join(", ")));
                }
                text.push('}');
                text
            },
        )
        .boxed()
}

proptest! {
    #[test]
    fn random_parameters_read_and_write_as_the_plain_struct(
        list in proptest::collection::vec(parameter(2), 0..6)
    ) {
        let text = format!("[{}]\n", list.join(", "));
        let [plain, boxed] = both(&text);
        prop_assert_eq!(plain, boxed);
    }
}
