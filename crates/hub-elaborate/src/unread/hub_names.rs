//! The stack parameters hub itself reads, whatever the components do: a
//! stack may set them for hub alone. The guide lists them, with why, in
//! its page on parameters.

/// Names read by hub, the Hub CLI or its extensions rather than by a
/// component.
const READ_BY_HUB: &[&str] = &[
    // The Hub CLI's well-known parameters (elaborate.md §15.1): the
    // children of `cloud`, `dns` and `terraform.bucket` that `hubctl
    // stack configure` and its cloud extensions write and read, whether
    // or not a component declares them.
    "cloud.provider",
    "cloud.account",
    "cloud.availabilityZone",
    "cloud.sshKey",
    "dns.baseDomain",
    "terraform.bucket.region",
    // The Kubernetes context `hubctl stack configure` reads for a stack
    // on an existing cluster (the hubctl tutorials set it in `hub.yaml`).
    "kubernetes.context",
    // The environment a policy sees as `stack.environment`.
    "environment",
];

/// Whether hub reads the stack parameter `name` itself: `hub.*` (the
/// implicit parameters), the names compared with the state's before a
/// deploy or undeploy (deploy.md §4.4), the ones a stack on a Kubernetes
/// platform takes from the platform's state (`elaborate -s`), and
/// [`READ_BY_HUB`].
pub(crate) fn read_by_hub(name: &str) -> bool {
    name.starts_with("hub.")
        || hub_state::CONSISTENT_PARAMETERS.contains(&name)
        || crate::state_fill::KUBERNETES_PARAMETERS.contains(&name)
        || READ_BY_HUB.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_compared_with_the_state_are_read_by_hub() {
        for name in hub_state::CONSISTENT_PARAMETERS {
            assert!(read_by_hub(name), "{name}");
        }
        assert!(read_by_hub("hub.deploymentId"));
        assert!(!read_by_hub("cloud.regions"));
        assert!(!read_by_hub("hubx"));
    }
}
