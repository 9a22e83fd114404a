//! Redis Cluster: three primaries on loopback, every BF./CF. command driven through a
//! cluster-aware client to keys spread over all slots (answers compared with a standalone
//! server running the same commands), then a slot holding filters moves to another node with
//! MIGRATE (DUMP/RESTORE) and every filter answers identically.
pub mod common;

use common::*;
use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

/// Follows MOVED and ASK redirections.
struct ClusterClient {
    nodes: HashMap<u16, Client>,
    default: u16,
}

impl ClusterClient {
    fn node(&mut self, port: u16) -> &mut Client {
        self.nodes
            .entry(port)
            .or_insert_with(|| Client::connect(port))
    }

    fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        let mut port = self.default;
        for _ in 0..5 {
            let reply = self.node(port).call(args);
            let Error(text) = &reply else { return reply };
            let mut words = text.split(' ');
            match (words.next(), words.nth(1)) {
                (Some("MOVED"), Some(address)) => {
                    port = address.rsplit(':').next().unwrap().parse().unwrap()
                }
                (Some("ASK"), Some(address)) => {
                    let target = address.rsplit(':').next().unwrap().parse().unwrap();
                    self.node(target).call(&["ASKING"]);
                    return self.node(target).call(args);
                }
                _ => return reply,
            }
        }
        panic!("too many redirections");
    }
}

fn node_id(c: &mut Client) -> String {
    call!(c, "CLUSTER", "MYID").text()
}

fn wait_cluster_ok(nodes: &[Server]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    for node in nodes {
        let mut c = node.client();
        while !call!(c, "CLUSTER", "INFO")
            .text()
            .contains("cluster_state:ok")
        {
            assert!(Instant::now() < deadline, "cluster did not become ok");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The commands of the workload: every BF./CF. command on 40 users' keys.
fn workload() -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let words = |w: &[&str]| -> Vec<String> { w.iter().map(|s| s.to_string()).collect() };
    for user in 0..40 {
        let (bf, cf) = (format!("{{user{user}}}:seen"), format!("{{user{user}}}:cf"));
        let (bf, cf) = (bf.as_str(), cf.as_str());
        commands.push(words(&["BF.RESERVE", bf, "0.01", "20", "EXPANSION", "10"]));
        commands.push(words(&["CF.RESERVE", cf, "32", "BUCKETSIZE", "2"]));
        for i in 0..30 {
            let item = format!("item{i}");
            commands.push(words(&["BF.ADD", bf, &item]));
            commands.push(words(&["CF.ADD", cf, &item]));
        }
        commands.push(words(&["BF.MADD", bf, "a", "b", "item3"]));
        commands.push(words(&["BF.INSERT", bf, "ITEMS", "c", "d"]));
        commands.push(words(&["BF.EXISTS", bf, "item7"]));
        commands.push(words(&["BF.MEXISTS", bf, "item7", "nope"]));
        commands.push(words(&["BF.INFO", bf]));
        commands.push(words(&["BF.CARD", bf]));
        commands.push(words(&["BF.DEBUG", bf]));
        commands.push(words(&["BF.SCANDUMP", bf, "0"]));
        commands.push(words(&["CF.ADDNX", cf, "item1"]));
        commands.push(words(&["CF.INSERT", cf, "ITEMS", "x", "y"]));
        commands.push(words(&["CF.INSERTNX", cf, "ITEMS", "x", "z"]));
        commands.push(words(&["CF.EXISTS", cf, "item2"]));
        commands.push(words(&["CF.MEXISTS", cf, "item2", "nope"]));
        commands.push(words(&["CF.COUNT", cf, "x"]));
        commands.push(words(&["CF.DEL", cf, "item4"]));
        commands.push(words(&["CF.COMPACT", cf]));
        commands.push(words(&["CF.INFO", cf]));
        commands.push(words(&["CF.DEBUG", cf]));
        commands.push(words(&["CF.SCANDUMP", cf, "0"]));
        commands.push(words(&["BF.ADD", &format!("{{user{user}}}:auto"), "x"]));
        commands.push(words(&["CF.ADD", &format!("{{user{user}}}:cfauto"), "x"]));
    }
    commands
}

/// DUMP payload and SCANDUMP bytes of every key of the workload (both routed by key).
fn state(call: &mut dyn FnMut(&[String]) -> Reply) -> Vec<Reply> {
    let mut out = Vec::new();
    for user in 0..40 {
        for (family, key) in [
            ("BF", format!("{{user{user}}}:seen")),
            ("CF", format!("{{user{user}}}:cf")),
            ("BF", format!("{{user{user}}}:auto")),
        ] {
            out.push(call(&["DUMP".into(), key.clone()]));
            let mut iter = 0i64;
            loop {
                let reply = call(&[format!("{family}.SCANDUMP"), key.clone(), iter.to_string()]);
                out.push(reply.clone());
                iter = reply.array()[0].int();
                if iter == 0 {
                    break;
                }
            }
        }
    }
    out
}

#[test]
fn filters_in_a_three_node_cluster() {
    let config = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "5000",
    ];
    let nodes: Vec<Server> = (0..3).map(|_| Server::build(&[], &config)).collect();
    let addresses: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let status = Command::new(cli_binary())
        .args(["--cluster", "create"])
        .args(&addresses)
        .args(["--cluster-yes"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    wait_cluster_ok(&nodes);

    let standalone = Server::start();
    let mut single = standalone.client();
    let mut cluster = ClusterClient {
        nodes: HashMap::new(),
        default: nodes[0].port,
    };
    for command in workload() {
        assert_eq!(cluster.call(&command), single.call(&command), "{command:?}");
    }
    // Keys landed on every node.
    for node in &nodes {
        assert!(call!(node.client(), "DBSIZE").int() > 10);
    }
    let before = state(&mut |args| single.call(args));
    assert_eq!(state(&mut |args| cluster.call(args)), before);

    // Move the slot of user7's filters to another node with MIGRATE.
    let slot = call!(nodes[0].client(), "CLUSTER", "KEYSLOT", "{user7}:seen").int();
    let owner_port = match cluster.call(&["CLUSTER", "NODES"]) {
        Bulk(text) => String::from_utf8(text).unwrap().lines().find_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let owns = fields[8..].iter().any(|range| {
                let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                (lo.parse::<i64>().unwrap()..=hi.parse::<i64>().unwrap()).contains(&slot)
            });
            owns.then(|| {
                fields[1]
                    .split(['@', ':'])
                    .nth(1)
                    .unwrap()
                    .parse::<u16>()
                    .unwrap()
            })
        }),
        other => panic!("{other:?}"),
    }
    .unwrap();
    let source = nodes.iter().find(|n| n.port == owner_port).unwrap();
    let target = nodes.iter().find(|n| n.port != owner_port).unwrap();
    let (mut s, mut t) = (source.client(), target.client());
    let (source_id, target_id) = (node_id(&mut s), node_id(&mut t));
    let slot = slot.to_string();
    assert_eq!(
        call!(
            t,
            "CLUSTER",
            "SETSLOT",
            slot.as_str(),
            "IMPORTING",
            source_id.as_str()
        ),
        ok()
    );
    assert_eq!(
        call!(
            s,
            "CLUSTER",
            "SETSLOT",
            slot.as_str(),
            "MIGRATING",
            target_id.as_str()
        ),
        ok()
    );
    let keys: Vec<String> = call!(s, "CLUSTER", "GETKEYSINSLOT", slot.as_str(), "100")
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    assert_eq!(keys.len(), 4);
    let mut migrate = vec![
        "MIGRATE".to_string(),
        "127.0.0.1".into(),
        target.port.to_string(),
        "".into(),
        "0".into(),
        "5000".into(),
        "KEYS".into(),
    ];
    migrate.extend(keys.iter().cloned());
    assert_eq!(s.call(&migrate), ok());
    for node in &nodes {
        assert_eq!(
            call!(
                node.client(),
                "CLUSTER",
                "SETSLOT",
                slot.as_str(),
                "NODE",
                target_id.as_str()
            ),
            ok()
        );
    }
    assert_eq!(
        call!(t, "CLUSTER", "COUNTKEYSINSLOT", slot.as_str()),
        Int(4)
    );
    assert_eq!(
        call!(s, "CLUSTER", "COUNTKEYSINSLOT", slot.as_str()),
        Int(0)
    );
    let mut fresh = ClusterClient {
        nodes: HashMap::new(),
        default: source.port,
    };
    assert_eq!(state(&mut |args| fresh.call(args)), before);
    assert_eq!(fresh.call(&["BF.EXISTS", "{user7}:seen", "item29"]), Int(1));
    assert_eq!(fresh.call(&["CF.COUNT", "{user7}:cf", "item29"]), Int(1));
}
