//! The CI/CD attributes of a run's root span (OpenTelemetry's `cicd.*`
//! and `vcs.*` semantic conventions), from the variables GitHub Actions
//! and GitLab CI set; nothing outside a CI.

/// The attributes `var` provides, in a fixed order.
pub fn attributes(var: &dyn Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    let mut out = Vec::new();
    let mut add = |key: &'static str, value: Option<String>| {
        if let Some(value) = value {
            out.push((key, value));
        }
    };
    if set("GITHUB_ACTIONS").is_some() {
        let repository = set("GITHUB_SERVER_URL").zip(set("GITHUB_REPOSITORY"));
        let repository = repository.map(|(server, repo)| format!("{server}/{repo}"));
        let run = repository.clone().zip(set("GITHUB_RUN_ID"));
        add("cicd.pipeline.name", set("GITHUB_WORKFLOW"));
        add("cicd.pipeline.run.id", set("GITHUB_RUN_ID"));
        add(
            "cicd.pipeline.run.url.full",
            run.map(|(repo, id)| format!("{repo}/actions/runs/{id}")),
        );
        add("cicd.pipeline.task.name", set("GITHUB_JOB"));
        add("vcs.repository.url.full", repository);
        add("vcs.ref.head.name", set("GITHUB_REF_NAME"));
        add("vcs.ref.head.revision", set("GITHUB_SHA"));
    } else if set("GITLAB_CI").is_some() {
        add(
            "cicd.pipeline.name",
            set("CI_PIPELINE_NAME").or_else(|| set("CI_PROJECT_PATH")),
        );
        add("cicd.pipeline.run.id", set("CI_PIPELINE_ID"));
        add("cicd.pipeline.run.url.full", set("CI_PIPELINE_URL"));
        add("cicd.pipeline.task.name", set("CI_JOB_NAME"));
        add("cicd.pipeline.task.run.id", set("CI_JOB_ID"));
        add("cicd.pipeline.task.run.url.full", set("CI_JOB_URL"));
        add("vcs.repository.url.full", set("CI_PROJECT_URL"));
        add("vcs.ref.head.name", set("CI_COMMIT_REF_NAME"));
        add("vcs.ref.head.revision", set("CI_COMMIT_SHA"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::attributes;

    fn from<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn github_actions() {
        let var = from(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/infra"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_WORKFLOW", "deploy"),
            ("GITHUB_JOB", "apply"),
            ("GITHUB_REF_NAME", "main"),
            ("GITHUB_SHA", "abc123"),
        ]);
        assert_eq!(
            attributes(&var),
            vec![
                ("cicd.pipeline.name", "deploy".to_string()),
                ("cicd.pipeline.run.id", "42".to_string()),
                (
                    "cicd.pipeline.run.url.full",
                    "https://github.com/acme/infra/actions/runs/42".to_string()
                ),
                ("cicd.pipeline.task.name", "apply".to_string()),
                (
                    "vcs.repository.url.full",
                    "https://github.com/acme/infra".to_string()
                ),
                ("vcs.ref.head.name", "main".to_string()),
                ("vcs.ref.head.revision", "abc123".to_string()),
            ]
        );
    }

    #[test]
    fn gitlab_ci_falls_back_to_the_project_path() {
        let var = from(&[
            ("GITLAB_CI", "true"),
            ("CI_PROJECT_PATH", "acme/infra"),
            ("CI_PIPELINE_ID", "7"),
            ("CI_JOB_NAME", "deploy"),
        ]);
        assert_eq!(
            attributes(&var),
            vec![
                ("cicd.pipeline.name", "acme/infra".to_string()),
                ("cicd.pipeline.run.id", "7".to_string()),
                ("cicd.pipeline.task.name", "deploy".to_string()),
            ]
        );
    }

    #[test]
    fn nothing_outside_a_ci() {
        assert!(attributes(&from(&[("GITHUB_SHA", "abc")])).is_empty());
    }
}
