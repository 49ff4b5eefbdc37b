use super::*;

#[test]
fn cpu_times_are_read_per_state_for_the_machine_and_each_core() {
    let stat = "cpu  100 20 30 1000 40 5 5 7 0 0
cpu0 60 10 20 500 30 5 5 3 0 0
cpu1 40 10 10 500 10 0 0 4 0 0
intr 12345 1 2
ctxt 987654
btime 1700000000";
    let (cpus, ctxt) = cpu_stat(stat, 100.0);
    assert_eq!(ctxt, Some(987654));
    assert_eq!(cpus.len(), 3);
    assert_eq!(cpus[0].0, None);
    let all = cpus[0].1;
    // user + nice, system + irq + softirq, in seconds at 100 ticks/s
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(near(all.user, 1.2) && near(all.system, 0.4), "{all:?}");
    assert!(near(all.iowait, 0.4) && near(all.steal, 0.07), "{all:?}");
    assert_eq!(all.idle, 10.0);
    assert!((all.busy() - 1.67).abs() < 1e-9);
    assert_eq!(cpus[2].0, Some(1));
    assert_eq!(cpus[2].1.user, 0.5);
}

#[test]
fn meminfo_is_read_in_bytes() {
    let m = meminfo(
        "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\nHugePages_Total:       0\n",
    );
    assert_eq!(m["MemTotal"], 24_000_000 * 1024);
    assert_eq!(m["MemAvailable"], 20_000_000 * 1024);
    assert_eq!(m["HugePages_Total"], 0);
}

#[test]
fn diskstats_count_operations_bytes_and_busy_time() {
    let text = "   8       0 sda 1000 10 8000 500 2000 20 16000 900 0 1500 1400 0 0 0 0
   8       1 sda1 900 10 7000 400 1900 20 15000 800 0 1400 1200 0 0 0 0
   7       0 loop0 5 0 10 0 0 0 0 0 0 0 0";
    let d = diskstats(text, |dev| !dev.ends_with(char::is_numeric));
    assert_eq!(
        d,
        vec![DiskStats {
            device: "sda".into(),
            reads: 1000,
            read_bytes: 8000 * 512,
            writes: 2000,
            write_bytes: 16000 * 512,
            busy_s: 1.5,
        }]
    );
    assert!(!is_disk("loop0") && !is_disk("ram0"));
}

#[test]
fn network_bytes_are_read_per_interface() {
    let text = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 123456     100    0    0    0     0          0         0   123456     100    0    0    0     0       0          0
  eth0: 999 9 0 0 0 0 0 0 555 5 0 0 0 0 0 0";
    assert_eq!(
        net_dev(text),
        vec![("lo".into(), 123456, 123456), ("eth0".into(), 999, 555)]
    );
}

#[test]
fn process_figures_are_read_past_a_command_name_with_parentheses() {
    let stat = "123 (postgres: (bench) idle) S 77 123 123 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 1 0 100 1000 10";
    assert_eq!(parent_of(stat), Some(77));
    assert_eq!(stat_cpu(stat, 100.0), Some(3.5));
    assert_eq!(parent_of("garbage"), None);
    assert_eq!(stat_cpu("1 (x) S 0", 100.0), None);
    let io_text = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
    assert_eq!(io(io_text), (Some(4096), Some(8192)));
    let status = "Name:\tredis-server\nThreads:\t5\nVmRSS:\t  1000 kB\nRssAnon:\t   600 kB\nvoluntary_ctxt_switches:\t42\n";
    assert_eq!(status_field(status, "RssAnon"), Some(600 * 1024));
    assert_eq!(status_field(status, "Threads"), Some(5));
    assert_eq!(status_field(status, "voluntary_ctxt_switches"), Some(42));
    assert_eq!(status_field(status, "Rss"), None);
}

#[test]
fn this_process_tree_is_measured() {
    let me = std::process::id();
    let mut tree = vec![me];
    tree.extend(descendants(me));
    let (u, n) = usage(&tree, ticks_per_second()).unwrap();
    assert!(n >= 1 && u.threads >= 1 && u.rss_anon > 0 && u.context_switches > 0);
    assert!(resident(std::process::id()).unwrap() > 0);
    // no process has pid 0 in /proc
    assert_eq!(usage(&[0], 100.0), None);
}

#[test]
fn listening_sockets_are_read_from_the_kernels_table() {
    let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:D0C2 00000000:0000 0A 00000000:00000000 00:00000000 00000000   105        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D0C2 0100007F:9C40 01 00000000:00000000 00:00000000 00000000   105        0 4243 1 0000000000000000 20 4 30 10 -1
   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0";
    let l = listening(tcp, false);
    assert_eq!(
        l,
        vec![
            (IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 53442, 4242),
            (IpAddr::V4(Ipv4Addr::UNSPECIFIED), 8080, 77)
        ]
    );
    let tcp6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0";
    assert_eq!(
        listening(tcp6, true),
        vec![(IpAddr::V6(Ipv6Addr::LOCALHOST), 8080, 99)]
    );
}

#[test]
fn mapped_addresses_match_their_ipv4_form() {
    let v4 = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mapped = IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped());
    assert!(same_ip(v4, mapped) && same_ip(mapped, v4));
    assert!(!same_ip(v4, IpAddr::V6(Ipv6Addr::LOCALHOST)));
}

#[test]
fn this_process_is_found_listening() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = format!("127.0.0.1:{port}");
    assert_eq!(listener(&server), Ok(std::process::id()));
    drop(l);
    assert_eq!(listener(&server), Err(ListenerError::NotListening(server)));
}

#[test]
fn descendants_are_found_from_the_childrens_lists_and_by_a_scan_alike() {
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .unwrap();
    let me = std::process::id();
    let listed = descendants(me);
    let scanned = descendants_by_scan(me);
    let _ = child.kill();
    let _ = child.wait();
    assert!(listed.contains(&child.id()), "{listed:?}");
    assert!(scanned.contains(&child.id()), "{scanned:?}");
}

#[test]
fn the_mount_of_a_path_is_the_longest_point_that_holds_it() {
    use std::path::Path;
    let info = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
30 27 8:2 / /data rw,noatime shared:5 - xfs /dev/sdb1 rw,attr2\n\
31 27 0:40 / /data\\040two rw - tmpfs tmp\\040fs rw\n";
    let m = mount_of(info, Path::new("/data/pg/base")).unwrap();
    assert_eq!(
        (m.point.as_str(), m.fstype.as_str(), m.source.as_str()),
        ("/data", "xfs", "/dev/sdb1")
    );
    assert_eq!(m.options, "rw,noatime");
    // the root holds what no other mount does; "/database" is not under "/data"
    assert_eq!(
        mount_of(info, Path::new("/database")).unwrap().fstype,
        "ext4"
    );
    let spaced = mount_of(info, Path::new("/data two/x")).unwrap();
    assert_eq!(
        (spaced.point.as_str(), spaced.source.as_str()),
        ("/data two", "tmp fs")
    );
    assert_eq!(mount_of("", Path::new("/x")), None);
    // this machine's own: a temporary directory is on some filesystem
    let d = tempfile::tempdir().unwrap();
    let fs = filesystem_of(d.path());
    assert!(
        fs.contains_key("filesystem") && fs.contains_key("mount"),
        "{fs:?}"
    );
}
