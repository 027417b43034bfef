//! `mcp`: the server's wire, spoken as raw JSON-RPC lines on stdin (the real client, the
//! official MCP Python SDK, drives the whole loop in scripts/mcp-it.py): `initialize`,
//! `notifications/initialized`, `tools/list`, and tool calls whose answers are the
//! subcommands' packets.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::recall::loop_setup;
use crate::support::Scratch;

/// A running `reward-memory mcp` with its pipes.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(s: &Scratch, args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reward-memory"))
            .current_dir(&s.path)
            .env("HOME", s.path.join(".home"))
            .env_remove("LOOPX_REGISTRY")
            .env_remove("REWARD_MEMORY_LEDGER")
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mcp starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    /// The response to request `id` (skipping notifications).
    fn response(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed stdout before answering {id}");
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC line");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// `initialize` and `notifications/initialized`.
    fn handshake(&mut self) -> Value {
        let init = self.request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "cli-test", "version": "0"},
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// `tools/call`: (isError, the packets of the text content).
    fn call(&mut self, id: u64, name: &str, arguments: Value) -> (bool, Vec<Value>) {
        let response = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        let result = &response["result"];
        let packets = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|c| c["text"].as_str())
            .filter(|t| t.starts_with('{'))
            .map(|t| serde_json::from_str(t).expect("packet"))
            .collect();
        (result["isError"] == json!(true), packets)
    }

    /// Closes stdin and waits: the server ends when its client goes.
    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().expect("exit").code().unwrap_or(-1)
    }
}

#[test]
fn answers_initialize_and_lists_the_loop_tools() {
    let s = Scratch::new();
    let mut server = Server::start(&s, &[]);
    let init = server.handshake();
    assert_eq!(init["result"]["serverInfo"]["name"], "reward-memory");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    let list = server.request(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "recall",
            "apply",
            "attribute",
            "correct",
            "ingest",
            "ledger_subject",
            "ledger_review",
            "rank_evaluate",
            "experiment_status"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
    // The input schema is the CLI's request type.
    let recall = &tools[0]["inputSchema"]["properties"];
    for field in [
        "goal_id",
        "agent_id",
        "query",
        "query_summary",
        "rank_prior",
    ] {
        assert!(recall.get(field).is_some(), "recall schema lacks {field}");
    }
    assert_eq!(server.finish(), 0);
}

#[test]
fn tools_answer_the_subcommands_packets_and_refusals_are_tool_errors() {
    let s = loop_setup();
    let mut server = Server::start(&s, &["--registry", "registry.json", "--runtime-root", "rt"]);
    server.handshake();
    let goal = json!({"goal_id": "embedded-demo", "agent_id": "pilot"});
    let events: Vec<Value> = ["event-a.json", "event-b.json"]
        .iter()
        .map(|f| {
            serde_json::from_str(&std::fs::read_to_string(s.path.join(f)).expect("event"))
                .expect("JSON")
        })
        .collect();
    let mut ingest = goal.clone();
    ingest["execute"] = json!(true);
    ingest["events"] = json!(events);
    let (error, receipts) = server.call(2, "ingest", ingest);
    assert!(!error);
    assert_eq!(receipts.len(), 2);
    assert!(receipts.iter().all(|r| r["status"] == "activated"));

    let mut recall = goal.clone();
    recall["query"] = json!(["test commits"]);
    recall["query_summary"] = json!(["review habits"]);
    let (error, packets) = server.call(3, "recall", recall);
    assert!(!error);
    let packet = &packets[0];
    assert_eq!(packet["schema_version"], "reward_memory_recall_v0");
    assert_eq!(packet["status"], "completed");
    let delivered: Vec<&str> = packet["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            r["delivered_content"]["content_summary"]
                .as_str()
                .expect("text")
        })
        .collect();
    assert!(
        delivered.contains(&"Run the focused test suite before pushing a branch."),
        "{packet}"
    );

    // A request error is a tool error carrying the error packet (exit 2 in the CLI).
    let (error, packets) = server.call(
        4,
        "apply",
        json!({"recall_session": "not-a-session", "application_id": "a:1",
               "artifact_ref": "pr:1", "outcome": "ignored", "reasoning_summary": "no"}),
    );
    assert!(error);
    assert_eq!(packets[0]["schema_version"], "reward_memory_error_v0");
    // So are arguments the request type does not take.
    let (error, packets) = server.call(5, "experiment_status", json!({"goal": "x"}));
    assert!(error);
    assert!(
        packets[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("goal")),
        "{}",
        packets[0]
    );
    // `input: "-"` reads the call's (empty) document, never the protocol stream.
    let (error, packets) = server.call(
        6,
        "ingest",
        json!({"input": {"path": "-"}, "goal_id": "embedded-demo", "agent_id": "pilot"}),
    );
    assert!(error);
    assert_eq!(packets[0]["status"], "invalid_request");
    let list = server.request(7, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "the session goes on");
    assert_eq!(server.finish(), 0);
}
