//! Clusters on loopback: nodes started as `Server`s with cluster mode on, joined by the server's
//! own `--cluster create`, and a client that routes by the replies a cluster client follows
//! (MOVED, ASK, TRYAGAIN).

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::client::{Client, Error, Reply};
use super::server::{cli_binary, Server};

/// Follows MOVED and ASK redirections, remembering where MOVED sent it; waits out TRYAGAIN
/// (a multi-key command during a migration).
pub struct ClusterClient {
    nodes: HashMap<u16, Client>,
    /// The node commands go to first.
    pub default: u16,
    /// How many MOVED and ASK replies it followed.
    pub redirections: usize,
}

impl ClusterClient {
    pub fn new(port: u16) -> ClusterClient {
        ClusterClient {
            nodes: HashMap::new(),
            default: port,
            redirections: 0,
        }
    }

    fn node(&mut self, port: u16) -> &mut Client {
        self.nodes
            .entry(port)
            .or_insert_with(|| Client::connect(port))
    }

    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        let port_of =
            |address: &str| -> u16 { address.rsplit(':').next().unwrap().parse().unwrap() };
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut port = self.default;
        loop {
            assert!(Instant::now() < deadline, "no node would serve the command");
            let reply = self.node(port).call(args);
            let Error(text) = &reply else { return reply };
            let mut words = text.split(' ');
            match (words.next(), words.nth(1)) {
                (Some("MOVED"), Some(address)) => {
                    self.redirections += 1;
                    port = port_of(address);
                    self.default = port;
                }
                (Some("ASK"), Some(address)) => {
                    self.redirections += 1;
                    let target = port_of(address);
                    self.node(target).call(&["ASKING"]);
                    return self.node(target).call(args);
                }
                (Some("TRYAGAIN"), _) => std::thread::sleep(Duration::from_millis(10)),
                _ => return reply,
            }
        }
    }
}

pub fn node_id(c: &mut Client) -> String {
    c.call(&["CLUSTER", "MYID"]).text()
}

/// Waits until every node reports the cluster ok.
pub fn wait_cluster_ok(nodes: &[Server]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    for node in nodes {
        let mut c = node.client();
        while !c
            .call(&["CLUSTER", "INFO"])
            .text()
            .contains("cluster_state:ok")
        {
            assert!(Instant::now() < deadline, "cluster did not become ok");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `primaries` primaries on loopback holding all 16384 slots, each with `replicas` replicas,
/// once every node reports the cluster ok and every replica's link is up. The primaries come
/// first in the returned nodes; `extra` are more `--name value` settings for every node.
pub fn start_cluster(primaries: usize, replicas: usize, extra: &[&str]) -> Vec<Server> {
    let mut config = vec![
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "5000",
    ];
    config.extend_from_slice(extra);
    let count = primaries * (1 + replicas);
    let nodes: Vec<Server> = (0..count).map(|_| Server::build(&[], &config)).collect();
    let addresses: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let status = Command::new(cli_binary())
        .args(["--cluster", "create"])
        .args(&addresses)
        .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    wait_cluster_ok(&nodes);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut first, mut then) = (Vec::new(), Vec::new());
    for node in nodes {
        let mut c = node.client();
        loop {
            let info = c.call(&["INFO", "replication"]).text();
            if info.contains("role:master") {
                first.push(node);
                break;
            }
            if info.contains("master_link_status:up") {
                then.push(node);
                break;
            }
            assert!(Instant::now() < deadline, "a replica did not connect");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    assert_eq!(first.len(), primaries);
    first.extend(then);
    first
}

/// The node (of `nodes`) that `node` replicates.
pub fn primary_of<'a>(node: &Server, nodes: &'a [Server]) -> &'a Server {
    let info = node.client().call(&["INFO", "replication"]).text();
    let port: u16 = info
        .lines()
        .find_map(|line| line.strip_prefix("master_port:"))
        .and_then(|port| port.trim().parse().ok())
        .expect("a replica");
    nodes.iter().find(|n| n.port == port).expect("its primary")
}

/// The port of the node owning `slot`, as the node `c` talks to sees it (`CLUSTER SLOTS`).
pub fn slot_owner(c: &mut Client, slot: i64) -> u16 {
    c.call(&["CLUSTER", "SLOTS"])
        .array()
        .iter()
        .find_map(|range| {
            let range = range.array();
            (range[0].int()..=range[1].int())
                .contains(&slot)
                .then(|| range[2].array()[1].int() as u16)
        })
        .unwrap()
}
