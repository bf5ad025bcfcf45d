//! The server must refuse a conflicting conditional write: every lock and
//! fencing test below relies on it, and would prove nothing on a server
//! that ignored the condition.

use super::server::server;

#[test]
fn the_server_refuses_a_create_over_an_existing_key() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("create");
    let path = format!("/{bucket}/state");
    let first = server.request("PUT", &path, &[("If-None-Match", "*")], b"one");
    assert_eq!(first.status, 200, "{}", first.body);
    let second = server.request("PUT", &path, &[("If-None-Match", "*")], b"two");
    assert_eq!(second.status, 412, "{}", second.body);
    assert_eq!(server.get(&bucket, "state").as_deref(), Some("one"));
}

#[test]
fn the_server_refuses_an_update_on_a_stale_etag() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("update");
    let path = format!("/{bucket}/state");
    let first = server.request("PUT", &path, &[], b"one");
    let stale = first.header("etag").expect("an etag").to_string();
    let second = server.request("PUT", &path, &[("If-Match", &stale)], b"two");
    assert_eq!(
        second.status, 200,
        "the current etag is accepted: {}",
        second.body
    );
    let third = server.request("PUT", &path, &[("If-Match", &stale)], b"three");
    assert_eq!(third.status, 412, "{}", third.body);
    assert_eq!(server.get(&bucket, "state").as_deref(), Some("two"));
}

#[test]
fn of_racing_creates_exactly_one_wins() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("race");
    for round in 0..10 {
        let path = format!("/{bucket}/lock{round}");
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..4)
                .map(|i| {
                    let path = &path;
                    scope.spawn(move || {
                        let body = format!("racer {i}");
                        server
                            .request("PUT", path, &[("If-None-Match", "*")], body.as_bytes())
                            .status
                    })
                })
                .collect();
            racers
                .into_iter()
                .map(|r| r.join().expect("racer"))
                .collect()
        });
        assert_eq!(
            statuses.iter().filter(|s| **s == 200).count(),
            1,
            "{statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| **s == 412).count(),
            3,
            "{statuses:?}"
        );
    }
}
