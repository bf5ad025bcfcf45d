//! Cloud filtering (§8.3): the cloud requirements (`aws`, `azure`, `gcp`,
//! `gcs`) of clouds that are not enabled are dropped from the stack's and
//! every component's `requires`, once, before anything is planned.
//!
//! The enabled clouds are those of `--clouds`, else the ones whose
//! credentials variables are set. When neither names a cloud, nothing is
//! filtered: every declared requirement is checked.

use hub_manifest::Elaborated;

/// A cloud of `--clouds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    Aws,
    Azure,
    Gcp,
}

/// The names `--clouds` accepts.
pub const CLOUD_NAMES: [&str; 3] = ["aws", "azure", "gcp"];

/// The variables whose presence enables a cloud when `--clouds` is not
/// given.
const DETECTED_BY: [(Cloud, &[&str]); 3] = [
    (
        Cloud::Aws,
        &["AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID"],
    ),
    (
        Cloud::Azure,
        &[
            "AZURE_AUTH_LOCATION",
            "AZURE_TENANT_ID",
            "AZURE_RESOURCE_GROUP_NAME",
        ],
    ),
    (Cloud::Gcp, &["GOOGLE_APPLICATION_CREDENTIALS"]),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a cloud hub knows; use one or more of aws, azure, gcp, separated by commas")]
pub struct UnknownCloud(pub String);

impl std::str::FromStr for Cloud {
    type Err = UnknownCloud;

    fn from_str(text: &str) -> Result<Self, UnknownCloud> {
        match text {
            "aws" => Ok(Cloud::Aws),
            "azure" => Ok(Cloud::Azure),
            "gcp" => Ok(Cloud::Gcp),
            other => Err(UnknownCloud(other.to_string())),
        }
    }
}

/// The cloud a requirement belongs to; `None` for every other requirement.
pub(crate) fn cloud_of(requirement: &str) -> Option<Cloud> {
    match requirement {
        "aws" => Some(Cloud::Aws),
        "azure" => Some(Cloud::Azure),
        "gcp" | "gcs" => Some(Cloud::Gcp),
        _ => None,
    }
}

/// Which clouds' requirements are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enabled {
    /// Given with `--clouds`.
    Given(Vec<Cloud>),
    /// Found from the credentials variables.
    Detected(Vec<Cloud>),
    /// Neither: every requirement is kept.
    Unknown,
}

impl Enabled {
    /// `--clouds` when given (every name must be a cloud), else what the
    /// environment shows. Empty values count as unset.
    pub fn resolve(
        flag: &[String],
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Enabled, UnknownCloud> {
        let given: Vec<&str> = flag
            .iter()
            .map(|name| name.trim())
            .filter(|name| !name.is_empty())
            .collect();
        if !given.is_empty() {
            let clouds = given
                .into_iter()
                .map(str::parse)
                .collect::<Result<Vec<Cloud>, _>>()?;
            return Ok(Enabled::Given(clouds));
        }
        let detected: Vec<Cloud> = DETECTED_BY
            .iter()
            .filter(|(_, names)| {
                names
                    .iter()
                    .any(|name| var(name).is_some_and(|v| !v.is_empty()))
            })
            .map(|(cloud, _)| *cloud)
            .collect();
        Ok(match detected.is_empty() {
            true => Enabled::Unknown,
            false => Enabled::Detected(detected),
        })
    }

    /// Whether `requirement` is checked: every requirement that is not a
    /// cloud's, and those of the enabled clouds.
    pub fn keeps(&self, requirement: &str) -> bool {
        let clouds = match self {
            Enabled::Given(clouds) | Enabled::Detected(clouds) => clouds,
            Enabled::Unknown => return true,
        };
        cloud_of(requirement).is_none_or(|cloud| clouds.contains(&cloud))
    }
}

/// Drops the requirements of clouds that are not enabled from the stack
/// and every component. Returns a warning when no cloud is known and the
/// stack has cloud requirements, which then are all checked.
pub fn filter(elaborated: &mut Elaborated, enabled: &Enabled) -> Option<String> {
    if *enabled == Enabled::Unknown {
        let declared = cloud_requirements(elaborated);
        return (!declared.is_empty()).then(|| undetected_warning(&declared));
    }
    elaborated.stack.requires.retain(|r| enabled.keeps(r));
    for component in &mut elaborated.components {
        component.requires.retain(|r| enabled.keeps(r));
    }
    None
}

/// The cloud requirements of the stack and its components, each once, in
/// the order first seen.
fn cloud_requirements(elaborated: &Elaborated) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let all = elaborated
        .stack
        .requires
        .iter()
        .chain(elaborated.components.iter().flat_map(|c| c.requires.iter()));
    for requirement in all {
        if cloud_of(requirement).is_some() && !found.contains(&requirement.as_str()) {
            found.push(requirement);
        }
    }
    found
}

fn undetected_warning(declared: &[&str]) -> String {
    let names: Vec<String> = declared.iter().map(|r| format!("`{r}`")).collect();
    let variables: Vec<&str> = DETECTED_BY
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .collect();
    format!(
        "no cloud given or detected (none of {} is set): the cloud requirements {} are all checked; give `--clouds aws` (or azure, gcp, comma-separated) to check only the clouds you deploy to",
        variables.join(", "),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::Manifest;

    fn vars(set: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            set.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn stack() -> Elaborated {
        let requires = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
        let mut component = Manifest::default();
        component.meta.name = "c".into();
        component.requires = requires(&["aws", "gcs", "kubernetes"]);
        let mut elaborated = Elaborated::default();
        elaborated.stack.requires = requires(&["aws", "azure", "gcp", "helm"]);
        elaborated.components = vec![component];
        elaborated
    }

    #[test]
    fn the_flag_wins_over_the_environment_and_rejects_unknown_clouds() {
        let env = vars(&[("AZURE_TENANT_ID", "t")]);
        let given = Enabled::resolve(&["aws".into(), "gcp".into()], &env).unwrap();
        assert_eq!(given, Enabled::Given(vec![Cloud::Aws, Cloud::Gcp]));
        let error = Enabled::resolve(&["aws".into(), "mars".into()], &env).unwrap_err();
        assert_eq!(error, UnknownCloud("mars".into()));
        assert!(error.to_string().contains("aws, azure, gcp"));
    }

    #[test]
    fn clouds_are_detected_from_their_variables() {
        let none: &[String] = &[];
        let env = vars(&[
            ("AWS_PROFILE", "dev"),
            ("GOOGLE_APPLICATION_CREDENTIALS", ""),
        ]);
        assert_eq!(
            Enabled::resolve(none, &env).unwrap(),
            Enabled::Detected(vec![Cloud::Aws])
        );
        let env = vars(&[
            ("AZURE_RESOURCE_GROUP_NAME", "rg"),
            ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json"),
        ]);
        assert_eq!(
            Enabled::resolve(none, &env).unwrap(),
            Enabled::Detected(vec![Cloud::Azure, Cloud::Gcp])
        );
        assert_eq!(
            Enabled::resolve(none, &vars(&[])).unwrap(),
            Enabled::Unknown
        );
    }

    #[test]
    fn other_clouds_requirements_are_dropped_and_gcp_keeps_gcs() {
        let mut e = stack();
        assert_eq!(filter(&mut e, &Enabled::Given(vec![Cloud::Aws])), None);
        assert_eq!(e.stack.requires, ["aws", "helm"]);
        assert_eq!(e.components[0].requires, ["aws", "kubernetes"]);
        let mut e = stack();
        filter(&mut e, &Enabled::Detected(vec![Cloud::Gcp]));
        assert_eq!(e.stack.requires, ["gcp", "helm"]);
        assert_eq!(e.components[0].requires, ["gcs", "kubernetes"]);
    }

    #[test]
    fn without_a_known_cloud_nothing_is_dropped_and_one_warning_names_them() {
        let mut e = stack();
        let warning = filter(&mut e, &Enabled::Unknown).expect("a warning");
        assert_eq!(e.stack.requires, ["aws", "azure", "gcp", "helm"]);
        assert!(
            warning.contains("`aws`, `azure`, `gcp`, `gcs`"),
            "{warning}"
        );
        assert!(warning.contains("AWS_PROFILE"), "{warning}");
        let mut plain = Elaborated::default();
        assert_eq!(filter(&mut plain, &Enabled::Unknown), None);
    }
}
