//! Tests of the Redis binding: options and errors without a server, the
//! conformance suite and cluster behaviour against the servers scripts/services starts.
use super::*;

fn server_url() -> String {
    std::env::var("YARDSTICK_REDIS_URL")
        .unwrap_or_else(|_| "redis://:benchpw@127.0.0.1:56379".into())
}

fn available() -> bool {
    crate::testing::server_available("Redis", &server_url(), "scripts/services start redis")
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
    RedisBinding::open(&Target::parse(url)?, opts)
}

/// Every open gets its own key prefix, so checks share the server but no keys.
fn open_fresh(opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
    open_url(
        &format!(
            "{}?prefix={}:",
            server_url(),
            crate::testing::unique_name("conf")
        ),
        opts,
    )
}

yardstick_core::conformance_suite!(open_fresh, available);

mod string_model {
    use super::*;

    fn open_fresh(opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
        open_url(
            &format!(
                "{}?model=string&pipeline=4&prefix={}:",
                server_url(),
                crate::testing::unique_name("str")
            ),
            opts,
        )
    }

    yardstick_core::conformance_suite!(open_fresh, available, without_scan);
}

/// The same checks on a three-master Redis Cluster (no scans there).
mod cluster {
    use super::*;

    pub(crate) fn cluster_url() -> String {
        std::env::var("YARDSTICK_REDIS_CLUSTER_URL").unwrap_or_else(|_| {
            "redis://:benchpw@127.0.0.1:46391,127.0.0.1:46392,127.0.0.1:46393".into()
        })
    }

    fn available() -> bool {
        crate::testing::server_available(
            "Redis Cluster",
            "redis://127.0.0.1:46391",
            "scripts/services start redis-cluster",
        )
    }

    fn open_fresh(opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
        open_url(
            &format!(
                "{}?pipeline=2&prefix={}:",
                cluster_url(),
                crate::testing::unique_name("cl")
            ),
            opts,
        )
    }

    yardstick_core::conformance_suite!(open_fresh, available, without_scan);

    #[test]
    fn cluster_mode_is_recorded_and_refuses_scans() {
        if !available() {
            return;
        }
        let b = open_fresh(&super::opts()).unwrap();
        assert_eq!(b.info().settings["cluster_seed_nodes"], "3");
        assert_eq!(b.info().settings["redis_mode"], "cluster");
        let with_scans = OpenOptions {
            scans: true,
            ..super::opts()
        };
        let e = open_fresh(&with_scans).err().unwrap().to_string();
        assert!(e.contains("no global key order"), "{e}");
    }
}

fn opts() -> OpenOptions {
    OpenOptions {
        schema: Schema {
            table: "usertable".into(),
            fields: vec!["field0".into()],
        },
        insert_mode: InsertMode::Insert,
        update_mode: UpdateMode::Update,
        create: true,
        sessions: 1,
        data_integrity: false,
        scans: false,
    }
}

#[test]
fn wrong_password_and_dead_port_are_one_clear_line_without_the_password() {
    if !available() {
        return;
    }
    let e = open_url(&server_url().replace("benchpw", "wrongpw"), &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("wrong or missing password") && !e.contains("wrongpw"),
        "{e}"
    );
    let e = open_url("redis://127.0.0.1:56379", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("wrong or missing password"), "{e}");
    let e = open_url("redis://:secretpw@127.0.0.1:1", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cannot connect to Redis at 127.0.0.1:1") && !e.contains("secretpw"),
        "{e}"
    );
    let e = open_url(&format!("{}?model=list", server_url()), &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown Redis model 'list'"), "{e}");
}

#[test]
fn tls_with_the_servers_ca_connects_and_records_settings() {
    if !available() {
        return;
    }
    let ca = crate::testing::test_ca();
    let url = format!(
        "rediss://:benchpw@127.0.0.1:56380?tls_ca={ca}&prefix={}:",
        crate::testing::unique_name("tls")
    );
    let b = open_url(&url, &opts()).unwrap();
    let info = b.info();
    assert!(
        info.version.starts_with(char::is_numeric),
        "{}",
        info.version
    );
    assert_eq!(info.settings.get("tls").map(String::as_str), Some("true"));
    assert!(info.settings.contains_key("appendonly"));
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(b"over tls");
        assert_eq!(s.insert(b"k", &ws).await.status(), Status::Ok);
        let mut rec = Record::with_fields(1);
        assert_eq!(
            s.read(b"k", Fields::All, &mut rec).await.status(),
            Status::Ok
        );
        assert_eq!(rec.get(0), Some(&b"over tls"[..]));
    });
    // without the CA the self-signed certificate is rejected at open
    let e = open_url("rediss://:benchpw@127.0.0.1:56380", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cannot connect to Redis at 127.0.0.1:56380"),
        "{e}"
    );
}

#[test]
fn pipelined_sessions_share_a_connection_per_thread() {
    if !available() {
        return;
    }
    // the driver's multiplexed connections, and yardstick's own (the default)
    for client in ["&client=redis-rs", ""] {
        let url = format!(
            "{}?model=string&pipeline=3&prefix={}:{client}",
            server_url(),
            crate::testing::unique_name("pipe")
        );
        let b = open_url(&url, &opts()).unwrap();
        assert_eq!(b.inner.resp.is_some(), client.is_empty(), "{url}");
        let rt = crate::testing::runtime();
        rt.block_on(async {
            let mut sessions = Vec::new();
            for _ in 0..7 {
                sessions.push(b.session().await.unwrap());
            }
            let users: Vec<usize> = if client.is_empty() {
                let mut pipes: Vec<std::rc::Rc<super::pipe::Pipe>> = Vec::new();
                let mut users = Vec::new();
                for s in &mut sessions {
                    let p = s.pipe.clone().expect("a pipe per session");
                    match pipes.iter().position(|q| std::rc::Rc::ptr_eq(q, &p)) {
                        Some(i) => users[i] += 1,
                        None => {
                            pipes.push(p);
                            users.push(1);
                        }
                    }
                }
                users
            } else {
                b.inner.shared.lock().unwrap().iter().map(|s| s.2).collect()
            };
            assert_eq!(users, vec![3, 3, 1], "{url}");
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(b"v");
            let futs = sessions.iter_mut().enumerate().map(|(i, s)| {
                let ws = ws.clone();
                async move { s.insert(format!("k{i}").as_bytes(), &ws).await.status() }
            });
            let statuses = futures_util::future::join_all(futs).await;
            assert!(statuses.iter().all(|s| *s == Status::Ok), "{statuses:?}");
            let mut rec = Record::default();
            for (i, s) in sessions.iter_mut().enumerate().rev() {
                let o = s
                    .read(format!("k{i}").as_bytes(), Fields::All, &mut rec)
                    .await;
                assert_eq!(o.status(), Status::Ok, "{o:?}");
                assert_eq!(rec.get(0), Some(&b"v"[..]));
            }
        });
    }
}

#[test]
fn a_client_that_cannot_serve_the_url_is_refused_in_one_line() {
    for (url, want) in [
        (
            format!("{}?model=hash&client=resp", server_url()),
            "use it with model=string",
        ),
        (
            format!("{}?model=string&client=tcp", server_url()),
            "unknown Redis client 'tcp'",
        ),
        (
            "redis://127.0.0.1:46391,127.0.0.1:46392?model=string&client=resp".into(),
            "one node over plain TCP",
        ),
    ] {
        let e = open_url(&url, &opts()).err().expect(&url).to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{url}: {e}");
    }
}

/// The server's error prefix and message reach the outcome.
#[test]
fn a_server_error_keeps_its_prefix_and_message() {
    if !available() {
        return;
    }
    let prefix = crate::testing::unique_name("wrongtype");
    let b = open_url(&format!("{}?prefix={prefix}:", server_url()), &opts()).unwrap();
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let client = redis::Client::open(server_url()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        // a string where the hash model keeps a record's hash
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}:k"))
            .arg("not a hash")
            .query_async(&mut c)
            .await
            .unwrap();
        let mut s = b.session().await.unwrap();
        let mut out = Record::with_fields(3);
        let o = s.read(b"k", Fields::All, &mut out).await;
        let detail = o.detail().unwrap_or_default();
        assert_eq!(o.status(), Status::Error, "{detail}");
        assert!(
            detail.contains("wrong kind of value (Redis WRONGTYPE)"),
            "{detail}"
        );
        let _: () = redis::cmd("DEL")
            .arg(format!("{prefix}:k"))
            .query_async(&mut c)
            .await
            .unwrap();
    });
}

#[test]
fn scans_are_refused_for_the_string_model_only() {
    if !available() {
        return;
    }
    let with_scans = OpenOptions {
        scans: true,
        ..opts()
    };
    let e = open_url(&format!("{}?model=string", server_url()), &with_scans)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("scans") && e.contains("model=hash"), "{e}");
    assert!(open_url(&server_url(), &with_scans).is_ok());
}

#[test]
fn a_released_value_buffer_takes_the_next_reply() {
    if !available() {
        return;
    }
    let url = format!(
        "{}?model=string&pipeline=4&prefix={}:",
        server_url(),
        crate::testing::unique_name("release")
    );
    let b = open_url(&url, &opts()).unwrap();
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        for (k, v) in [(&b"a"[..], &b"first value"[..]), (b"b", b"second")] {
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(v);
            assert_eq!(s.insert(k, &ws).await.status(), Status::Ok);
        }
        let mut rec = Record::default();
        assert_eq!(
            s.read(b"a", Fields::All, &mut rec).await.status(),
            Status::Ok
        );
        let at = rec.get(0).expect("read a").as_ptr();
        let pipe = s.pipe.clone().expect("a pipe");
        let spares = pipe.spares();
        s.release(&mut rec);
        assert_eq!(rec.get(0), None);
        assert_eq!(
            pipe.spares(),
            spares + 1,
            "the buffer went back to the pipe"
        );
        assert_eq!(
            s.read(b"b", Fields::All, &mut rec).await.status(),
            Status::Ok
        );
        assert_eq!(rec.get(0), Some(&b"second"[..]));
        assert_eq!(
            rec.get(0).unwrap().as_ptr(),
            at,
            "the next reply landed in it"
        );
    });
}

/// A one-field record written whole goes over the pipe as one `SET` of its
/// value, awaited in the session's method: each semantics' refusal holds,
/// the value reads back, and when the server closes the connection the
/// call fails as unavailable and the next one connects anew.
#[test]
fn whole_one_field_writes_over_the_pipe_keep_their_semantics_and_reconnect() {
    if !available() {
        return;
    }
    let user = crate::testing::unique_name("ysuser");
    let prefix = crate::testing::unique_name("whole");
    let admin = redis::Client::open(server_url()).unwrap();
    let (host, port) = match admin.get_connection_info().addr() {
        redis::ConnectionAddr::Tcp(h, p) => (h.clone(), *p),
        other => panic!("the test server is on TCP, not {other:?}"),
    };
    let url = format!("redis://{user}:userpw@{host}:{port}?model=string&pipeline=2&prefix={prefix}:");
    let value = |v: &[u8]| {
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(v);
        ws
    };
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut c = admin.get_multiplexed_async_connection().await.unwrap();
        let command = |args: &[&str]| {
            let mut cmd = redis::cmd(args[0]);
            args[1..].iter().for_each(|a| {
                cmd.arg(*a);
            });
            cmd
        };
        let _: () = command(&["ACL", "SETUSER", &user, "on", ">userpw", "~*", "+@all"])
            .query_async(&mut c)
            .await
            .unwrap();
        let strict = open_url(&url, &opts()).unwrap();
        assert!(strict.inner.resp.is_some(), "{url} goes over the pipe");
        let mut s = strict.session().await.unwrap();
        let mut rec = Record::default();
        assert_eq!(s.update(b"k", &value(b"v0")).await.status(), Status::NotFound);
        assert_eq!(s.insert(b"k", &value(b"v1")).await.status(), Status::Ok);
        assert_eq!(s.insert(b"k", &value(b"v2")).await.status(), Status::DuplicateKey);
        let o = s.update(b"k", &value(b"v3")).await;
        assert_eq!((o.status(), o.bytes()), (Status::Ok, 2), "{o:?}");
        assert_eq!(s.read(b"k", Fields::All, &mut rec).await.status(), Status::Ok);
        assert_eq!(rec.get(0), Some(&b"v3"[..]));
        let upserting = OpenOptions {
            insert_mode: InsertMode::Upsert,
            update_mode: UpdateMode::Upsert,
            ..opts()
        };
        let loose = open_url(&url, &upserting).unwrap();
        let mut u = loose.session().await.unwrap();
        assert_eq!(u.update(b"m", &value(b"m1")).await.status(), Status::Ok);
        assert_eq!(u.insert(b"m", &value(b"m2")).await.status(), Status::Ok);
        assert_eq!(u.read(b"m", Fields::All, &mut rec).await.status(), Status::Ok);
        assert_eq!(rec.get(0), Some(&b"m2"[..]));

        // the server drops the user's connections: this test's only
        let _: i64 = command(&["CLIENT", "KILL", "USER", &user])
            .query_async(&mut c)
            .await
            .unwrap();
        let o = s.update(b"k", &value(b"v4")).await;
        assert_eq!(o.status(), Status::Unavailable, "{o:?}");
        assert!(s.pipe.is_none(), "the broken pipe is dropped");
        assert_eq!(s.update(b"k", &value(b"v5")).await.status(), Status::Ok);
        assert!(s.pipe.is_some(), "connected anew");
        assert_eq!(s.read(b"k", Fields::All, &mut rec).await.status(), Status::Ok);
        assert_eq!(rec.get(0), Some(&b"v5"[..]));

        let _: () = redis::cmd("DEL")
            .arg(format!("{prefix}:k"))
            .arg(format!("{prefix}:m"))
            .query_async(&mut c)
            .await
            .unwrap();
        let _: i64 = command(&["ACL", "DELUSER", &user]).query_async(&mut c).await.unwrap();
    });
}
