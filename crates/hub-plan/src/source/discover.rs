//! Implementation discovery (deploy.md §6.8): what to run for verb `V` in
//! a component directory. Probed in order, the first match wins:
//!
//! 1. `Makefile` with a line starting with `V:` → `make V`;
//! 2. the first regular file among `V`, `bin/V`, `_V`, `V.sh`, `bin/V.sh`,
//!    `_V.sh` → run directly, without arguments;
//! 3. `values.yaml` (or `.template`, `.gotemplate`) → extension
//!    `hub-component-helm`;
//! 4. `kustomization.yaml` (+ variants) → extension `hub-component-kustomize`;
//! 5. `skaffold.yaml` (+ variants) → `skaffold run` / `skaffold delete` /
//!    `skaffold V`;
//! 6. any `*.tf` or `*.tf.*` → extension `hub-component-terraform`, else
//!    hub's built-in Terraform ([`crate::terraform`]: `init`, `apply`,
//!    `output -json`; `destroy` to undeploy).
//!
//! An extension `hub-component-<name>` is looked up as the executable
//! `hub-component-<name>-V`, then `hub-component-<name>` (argument `V`),
//! then `hub-component` (arguments `<name> V`), each in `./.hub`,
//! `$HUB_EXTENSIONS`, `$HOME/.hub`, `/usr/local/share/hub`,
//! `/usr/share/hub`, then `PATH`. A probe that recognises its files but
//! finds no program is reported and the next probe is tried.
//!
//! Nothing found: with `lifecycle.bare: allow` the invocation is a no-op
//! ([`Implementation::Bare`]), otherwise an error lists every probe.

use std::path::{Path, PathBuf};

/// What runs a verb of a component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Implementation {
    /// `make <target>` in `makefile_dir`.
    Make {
        makefile_dir: PathBuf,
        target: String,
    },
    /// A script or program, run without arguments.
    Script { path: PathBuf },
    /// An extension program or a tool with its arguments.
    Extension { program: PathBuf, args: Vec<String> },
    /// Hub's built-in Terraform run of `verb` with `binary` (unless a
    /// parameter names another), see [`crate::terraform`].
    Terraform { binary: PathBuf, verb: String },
    /// `lifecycle.bare: allow` and nothing to run.
    Bare,
}

impl Implementation {
    /// The program and arguments to run, in the component directory; `None`
    /// for [`Implementation::Bare`]. `make` is found on `PATH`, else
    /// `/usr/bin/make`. Script paths are absolute.
    pub fn command(&self) -> Option<(PathBuf, Vec<String>)> {
        match self {
            Implementation::Make { target, .. } => Some((
                which("make").unwrap_or_else(|| PathBuf::from("/usr/bin/make")),
                vec![target.clone()],
            )),
            Implementation::Script { path } => Some((path.clone(), Vec::new())),
            Implementation::Extension { program, args } => Some((program.clone(), args.clone())),
            Implementation::Terraform { binary, verb } => {
                Some(crate::terraform::command(binary, verb))
            }
            Implementation::Bare => None,
        }
    }
}

impl Implementation {
    /// What runs, in a few words, with paths relative to the component's
    /// folder `dir`: `deploy.sh`, `make deploy`, `hub-component-helm
    /// deploy`, `terraform apply (built in)`. What `hub plan` shows.
    pub fn short(&self, dir: &Path) -> String {
        let relative = |path: &Path| path.strip_prefix(dir).unwrap_or(path).display().to_string();
        match self {
            Implementation::Make {
                makefile_dir,
                target,
            } => match makefile_dir.as_path() == dir {
                true => format!("make {target}"),
                false => format!("make {target} (in {})", makefile_dir.display()),
            },
            Implementation::Script { path } => relative(path),
            Implementation::Extension { program, args } => {
                let name = program.file_name().map_or_else(
                    || program.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                std::iter::once(name)
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            Implementation::Terraform { binary, verb } => {
                let name = binary
                    .file_name()
                    .map_or_else(|| "terraform".into(), |n| n.to_string_lossy().into_owned());
                let command = match verb.as_str() {
                    "undeploy" => "destroy",
                    _ => "apply",
                };
                format!("{name} {command} (hub's built-in Terraform)")
            }
            Implementation::Bare => "nothing (`lifecycle.bare: allow`)".into(),
        }
    }
}

impl std::fmt::Display for Implementation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Implementation::Make {
                makefile_dir,
                target,
            } => {
                write!(f, "make {target} (in {})", makefile_dir.display())
            }
            Implementation::Script { path } => write!(f, "{}", path.display()),
            Implementation::Extension { program, args } => {
                write!(f, "{}", program.display())?;
                args.iter().try_for_each(|a| write!(f, " {a}"))
            }
            Implementation::Terraform { binary, verb } => {
                write!(
                    f,
                    "hub's built-in Terraform ({} for {verb})",
                    binary.display()
                )
            }
            Implementation::Bare => f.write_str("nothing (lifecycle.bare: allow)"),
        }
    }
}

#[derive(thiserror::Error, Debug)]
pub enum DiscoverError {
    #[error("component directory `{}` does not exist or is not a directory", dir.display())]
    NoDirectory { dir: PathBuf },
    #[error("no implementation of `{verb}` in `{}`:\n{}", dir.display(), list(probes))]
    NotFound {
        dir: PathBuf,
        verb: String,
        probes: Vec<String>,
    },
}

fn list(probes: &[String]) -> String {
    probes
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl DiscoverError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            DiscoverError::NoDirectory { .. } => {
                super::stack::COMPONENT_FOLDER_HINT.into()
            }
            DiscoverError::NotFound { verb, .. } => format!(
                "add a Makefile target `{verb}:` or a script `{verb}.sh`; a component with nothing to run \
                 (only `value:` outputs) can say `lifecycle: {{bare: allow}}` in its manifest"
            ),
        })
    }
}

/// Finds what runs `verb` in `dir`; see the module documentation.
pub fn discover(
    dir: &Path,
    verb: &str,
    bare_allowed: bool,
) -> Result<Implementation, DiscoverError> {
    if !dir.is_dir() {
        return Err(DiscoverError::NoDirectory {
            dir: dir.to_path_buf(),
        });
    }
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut probes = Vec::new();
    let found = probe_makefile(&dir, verb, &mut probes)
        .or_else(|| probe_scripts(&dir, verb, &mut probes))
        .or_else(|| probe_extensions(&dir, verb, &mut probes));
    match found {
        Some(implementation) => Ok(implementation),
        None if bare_allowed => Ok(Implementation::Bare),
        None => Err(DiscoverError::NotFound {
            dir,
            verb: verb.to_string(),
            probes,
        }),
    }
}

/// What runs a component's plan step (`--plan-steps`): a Makefile target
/// `plan:`, a script `plan`, `plan.sh` (and the other names of
/// [`script_names`]), or hub's built-in Terraform (`terraform plan -out`,
/// then `terraform show -json`); `None` when the component has none.
/// Extensions (Helm, Kustomize, Skaffold) have no plan step.
pub fn plan_step(dir: &Path) -> Option<Implementation> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut probes = Vec::new();
    probe_makefile(&dir, PLAN_VERB, &mut probes)
        .or_else(|| probe_scripts(&dir, PLAN_VERB, &mut probes))
        .or_else(|| {
            terraform_file(&dir).map(|_| Implementation::Terraform {
                binary: crate::terraform::default_binary(),
                verb: PLAN_VERB.to_string(),
            })
        })
}

/// The verb of a plan step.
pub const PLAN_VERB: &str = "plan";

fn probe_makefile(dir: &Path, verb: &str, probes: &mut Vec<String>) -> Option<Implementation> {
    let makefile = dir.join("Makefile");
    let Ok(text) = std::fs::read_to_string(&makefile) else {
        probes.push("no `Makefile`".into());
        return None;
    };
    let target = format!("{verb}:");
    if text.lines().any(|line| line.starts_with(&target)) {
        Some(Implementation::Make {
            makefile_dir: dir.to_path_buf(),
            target: verb.to_string(),
        })
    } else {
        probes.push(format!("`Makefile` has no line starting with `{target}`"));
        None
    }
}

/// The names a script `name` is looked for under, in order (deploy.md
/// §6.8 item 2): implementations by verb, and hooks by file.
pub(crate) fn script_names(name: &str) -> [String; 6] {
    [
        name.to_string(),
        format!("bin/{name}"),
        format!("_{name}"),
        format!("{name}.sh"),
        format!("bin/{name}.sh"),
        format!("_{name}.sh"),
    ]
}

fn probe_scripts(dir: &Path, verb: &str, probes: &mut Vec<String>) -> Option<Implementation> {
    let names = script_names(verb);
    let found = names.iter().map(|n| dir.join(n)).find(|p| p.is_file());
    if found.is_none() {
        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        probes.push(format!("no file {}", quoted.join(", ")));
    }
    found.map(|path| Implementation::Script { path })
}

/// The secondary probes 3–6.
fn probe_extensions(dir: &Path, verb: &str, probes: &mut Vec<String>) -> Option<Implementation> {
    let variants = |base: &str| {
        [
            base.to_string(),
            format!("{base}.template"),
            format!("{base}.gotemplate"),
        ]
    };
    if let Some(file) = variants("values.yaml")
        .into_iter()
        .find(|f| dir.join(f).is_file())
    {
        if let Some(found) = extension("helm", verb, &file, probes) {
            return Some(found);
        }
    }
    if let Some(file) = variants("kustomization.yaml")
        .into_iter()
        .find(|f| dir.join(f).is_file())
    {
        if let Some(found) = extension("kustomize", verb, &file, probes) {
            return Some(found);
        }
    }
    if let Some(file) = variants("skaffold.yaml")
        .into_iter()
        .find(|f| dir.join(f).is_file())
    {
        match which("skaffold") {
            Some(program) => return Some(skaffold(program, verb)),
            None => probes.push(format!("`{file}` found, but `skaffold` is not on PATH")),
        }
    }
    if let Some(file) = terraform_file(dir) {
        if let Some(found) = extension("terraform", verb, &file, probes) {
            return Some(found);
        }
        if crate::terraform::VERBS.contains(&verb) {
            return Some(Implementation::Terraform {
                binary: crate::terraform::default_binary(),
                verb: verb.to_string(),
            });
        }
        probes.push(format!(
            "`{file}` found, but hub's built-in Terraform runs only {}",
            crate::terraform::VERBS.map(|v| format!("`{v}`")).join(", ")
        ));
    }
    None
}

fn skaffold(program: PathBuf, verb: &str) -> Implementation {
    let command = match verb {
        "deploy" => "run",
        "undeploy" => "delete",
        other => other,
    };
    Implementation::Extension {
        program,
        args: vec![command.to_string()],
    }
}

/// The first `*.tf` or `*.tf.*` file name of `dir`, in name order.
fn terraform_file(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tf") || n.contains(".tf."))
        .collect();
    names.sort();
    names.into_iter().next()
}

fn extension(
    name: &str,
    verb: &str,
    file: &str,
    probes: &mut Vec<String>,
) -> Option<Implementation> {
    let found = find_extension(name, verb, &extension_dirs());
    if found.is_none() {
        probes.push(format!(
            "`{file}` found, but extension `hub-component-{name}` not found \
             (in ./.hub, $HUB_EXTENSIONS, $HOME/.hub, /usr/local/share/hub, /usr/share/hub or on PATH)"
        ));
    }
    found
}

/// The directories searched for extensions before `PATH`.
fn extension_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from(".hub")];
    if let Some(extensions) = std::env::var_os("HUB_EXTENSIONS").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(extensions));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(home).join(".hub"));
    }
    dirs.push(PathBuf::from("/usr/local/share/hub"));
    dirs.push(PathBuf::from("/usr/share/hub"));
    dirs
}

/// `hub-component-<name>-<verb>`, `hub-component-<name> <verb>`,
/// `hub-component <name> <verb>`, each in `dirs` then on `PATH`.
fn find_extension(name: &str, verb: &str, dirs: &[PathBuf]) -> Option<Implementation> {
    let candidates = [
        (format!("hub-component-{name}-{verb}"), vec![]),
        (format!("hub-component-{name}"), vec![verb.to_string()]),
        (
            "hub-component".to_string(),
            vec![name.to_string(), verb.to_string()],
        ),
    ];
    candidates.into_iter().find_map(|(program, args)| {
        dirs.iter()
            .map(|d| d.join(&program))
            .find(|p| is_executable(p))
            .map(|p| std::path::absolute(&p).unwrap_or(p))
            .or_else(|| which(&program))
            .map(|program| Implementation::Extension { program, args })
    })
}

/// The first executable `program` on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    which::which(program).ok()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn component(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
        }
        dir
    }

    fn script(dir: &Path, name: &str) -> Implementation {
        Implementation::Script {
            path: std::path::absolute(dir.join(name)).expect("absolute"),
        }
    }

    #[test]
    fn deploy_case_25a_makefile_target_wins() {
        let dir = component(&[
            ("Makefile", "all:\n\ttrue\ndeploy: init\n\ttrue\n"),
            ("deploy.sh", ""),
        ]);
        let found = discover(dir.path(), "deploy", false).expect("found");
        assert_eq!(
            found,
            Implementation::Make {
                makefile_dir: std::path::absolute(dir.path()).expect("absolute"),
                target: "deploy".into()
            }
        );
        let (program, args) = found.command().expect("a command");
        assert!(program.ends_with("make"), "{}", program.display());
        assert_eq!(args, ["deploy"]);
    }

    #[test]
    fn makefile_textual_check() {
        for text in ["deploy::\n", "deploy:=x\n", "x:\ndeploy:\n"] {
            let dir = component(&[("Makefile", text)]);
            assert!(
                matches!(
                    discover(dir.path(), "deploy", false),
                    Ok(Implementation::Make { .. })
                ),
                "{text:?}"
            );
        }
        let indented = component(&[("Makefile", " deploy:\n\tdeploy: x\n"), ("_deploy", "")]);
        assert_eq!(
            discover(indented.path(), "deploy", false).expect("found"),
            script(indented.path(), "_deploy")
        );
    }

    #[test]
    fn deploy_case_25b_makefile_without_target_falls_through() {
        let dir = component(&[("Makefile", "undeploy:\n\ttrue\n"), ("deploy.sh", "")]);
        assert_eq!(
            discover(dir.path(), "deploy", false).expect("found"),
            script(dir.path(), "deploy.sh")
        );
    }

    #[test]
    fn deploy_case_25c_script_order() {
        let order = [
            "deploy",
            "bin/deploy",
            "_deploy",
            "deploy.sh",
            "bin/deploy.sh",
            "_deploy.sh",
        ];
        for (i, expected) in order.iter().enumerate() {
            let files: Vec<(&str, &str)> = order[i..].iter().map(|n| (*n, "")).collect();
            let dir = component(&files);
            let found = discover(dir.path(), "deploy", false).expect("found");
            assert_eq!(found, script(dir.path(), expected));
            let absolute = std::path::absolute(dir.path().join(expected)).expect("absolute");
            assert_eq!(found.command(), Some((absolute, vec![])));
        }
    }

    #[test]
    fn deploy_case_25d_plain_name_beats_sh() {
        let dir = component(&[("deploy", ""), ("deploy.sh", "")]);
        assert_eq!(
            discover(dir.path(), "deploy", false).expect("found"),
            script(dir.path(), "deploy")
        );
    }

    #[test]
    fn directories_are_not_scripts() {
        let dir = component(&[("deploy/readme", ""), ("deploy.sh", "")]);
        assert_eq!(
            discover(dir.path(), "deploy", false).expect("found"),
            script(dir.path(), "deploy.sh")
        );
    }

    #[test]
    fn dry_run_verb() {
        let dir = component(&[("deploy.sh", ""), ("deploy-test.sh", "")]);
        assert_eq!(
            discover(dir.path(), "deploy-test", false).expect("found"),
            script(dir.path(), "deploy-test.sh")
        );
    }

    #[test]
    fn deploy_case_26_missing_implementation_lists_probes_and_suggests_bare() {
        let dir = component(&[("undeploy.sh", "")]);
        let error = discover(dir.path(), "deploy", false).expect_err("nothing to run");
        let text = error.to_string();
        assert!(text.contains("no `Makefile`"), "{text}");
        assert!(text.contains("`bin/deploy.sh`"), "{text}");
        assert!(error.hint().expect("hint").contains("bare: allow"));
        assert_eq!(
            discover(dir.path(), "deploy", true).expect("bare"),
            Implementation::Bare
        );
        assert_eq!(Implementation::Bare.command(), None);
    }

    #[test]
    fn missing_directory() {
        let dir = component(&[]);
        let error = discover(&dir.path().join("nope"), "deploy", true).expect_err("no dir");
        assert!(matches!(error, DiscoverError::NoDirectory { .. }));
    }

    #[test]
    fn recognised_extension_files_are_reported() {
        let dir = component(&[("values.yaml.template", ""), ("main.tf", "")]);
        let error = discover(dir.path(), "backup", false).expect_err("no extensions here");
        let text = error.to_string();
        assert!(
            text.contains(
                "`values.yaml.template` found, but extension `hub-component-helm` not found"
            ),
            "{text}"
        );
        assert!(
            text.contains("`main.tf` found, but extension `hub-component-terraform`"),
            "{text}"
        );
        assert!(
            text.contains(
                "`main.tf` found, but hub's built-in Terraform runs only `deploy`, `undeploy`"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_folder_of_tf_files_is_deployed_by_hub_itself() {
        let dir = component(&[("main.tf", ""), ("hub-component.yaml", "")]);
        for verb in ["deploy", "undeploy", "deploy-test"] {
            let found = discover(dir.path(), verb, false).expect("built in");
            let Implementation::Terraform { verb: runs, .. } = &found else {
                panic!("{found:?}");
            };
            assert_eq!(runs, verb);
            let (program, args) = found.command().expect("a command");
            assert_eq!(program, PathBuf::from("/bin/sh"));
            assert_eq!(args[0], "-c");
            assert_eq!(&args[4..], [verb, crate::terraform::OUTPUTS_FILE]);
        }
        // Another implementation wins.
        let scripted = component(&[("main.tf", ""), ("deploy.sh", "")]);
        assert_eq!(
            discover(scripted.path(), "deploy", false).expect("script"),
            script(scripted.path(), "deploy.sh")
        );
    }

    #[test]
    fn extension_lookup_order() {
        let ext = component(&[
            ("hub-component-helm", "#!/bin/sh\n"),
            ("hub-component", "#!/bin/sh\n"),
            ("not-executable/hub-component-helm-deploy", ""),
        ]);
        for name in [
            "hub-component-helm",
            "hub-component",
            "not-executable/hub-component-helm-deploy",
        ] {
            let path = ext.path().join(name);
            let mode = if name.starts_with("not-") {
                0o644
            } else {
                0o755
            };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
        let dirs = [ext.path().join("not-executable"), ext.path().to_path_buf()];
        assert_eq!(
            find_extension("helm", "deploy", &dirs),
            Some(Implementation::Extension {
                program: ext.path().join("hub-component-helm"),
                args: vec!["deploy".into()]
            })
        );
        assert_eq!(
            find_extension("kustomize", "undeploy", &dirs),
            Some(Implementation::Extension {
                program: ext.path().join("hub-component"),
                args: vec!["kustomize".into(), "undeploy".into()]
            })
        );
    }

    #[test]
    fn skaffold_verbs() {
        let program = PathBuf::from("/bin/skaffold");
        let args = |verb| match skaffold(program.clone(), verb) {
            Implementation::Extension { args, .. } => args,
            other => panic!("{other:?}"),
        };
        assert_eq!(args("deploy"), ["run"]);
        assert_eq!(args("undeploy"), ["delete"]);
        assert_eq!(args("backup"), ["backup"]);
    }

    #[test]
    fn terraform_files() {
        let dir = component(&[("b.tf.json", ""), ("a.tfvars", ""), ("notes", "")]);
        assert_eq!(terraform_file(dir.path()), Some("b.tf.json".into()));
        let none = component(&[("a.tfvars", "")]);
        assert_eq!(terraform_file(none.path()), None);
    }

    #[test]
    fn the_plan_names_what_runs_relative_to_the_component() {
        let dir = Path::new("/stack/components/app");
        let script = Implementation::Script {
            path: dir.join("bin/deploy.sh"),
        };
        assert_eq!(script.short(dir), "bin/deploy.sh");
        let make = Implementation::Make {
            makefile_dir: dir.to_path_buf(),
            target: "deploy".into(),
        };
        assert_eq!(make.short(dir), "make deploy");
        let extension = Implementation::Extension {
            program: PathBuf::from("/usr/local/share/hub/hub-component-helm"),
            args: vec!["deploy".into()],
        };
        assert_eq!(extension.short(dir), "hub-component-helm deploy");
        let terraform = Implementation::Terraform {
            binary: PathBuf::from("/usr/bin/tofu"),
            verb: "undeploy".into(),
        };
        assert_eq!(
            terraform.short(dir),
            "tofu destroy (hub's built-in Terraform)"
        );
    }
}
