//! Shared helpers for the integration tests: the testee process and an
//! in-memory page sink.
#![allow(dead_code)]

use cannery_capture::capture::PageSink;
use cannery_capture::sample::SplitMix64;
use cannery_capture::{RegionKind, PAGE_SIZE};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub const TESTEE: &str = env!("CARGO_BIN_EXE_cannery-capture-testee");

/// Same as the testee's pattern().
pub fn pattern(i: u64) -> Vec<u8> {
    let mut g = SplitMix64::new(i + 1);
    let mut v = Vec::with_capacity(PAGE_SIZE);
    while v.len() < PAGE_SIZE {
        v.extend_from_slice(&g.next_u64().to_le_bytes());
    }
    v
}

pub struct Testee {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
    pub region: u64,
    pub dontdump: u64,
    pub shared: u64,
    pub guard: u64,
    pub filemap: u64,
}

impl Testee {
    pub fn start() -> Testee {
        let mut child = Command::new(TESTEE)
            .arg("hold")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start testee");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let field = |name: &str| -> u64 {
            let v = line
                .split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("testee said {line:?}"));
            u64::from_str_radix(v, 16).unwrap()
        };
        Testee {
            region: field("region"),
            dontdump: field("dontdump"),
            shared: field("shared"),
            guard: field("guard"),
            filemap: field("filemap"),
            child,
            stdin,
            stdout,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn ping(&mut self) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        if writeln!(stdin, "ping").and_then(|_| stdin.flush()).is_err() {
            return false;
        }
        let mut line = String::new();
        self.stdout.read_line(&mut line).is_ok() && line.trim() == "pong"
    }

    /// Pagemap entries of the 64-page region.
    pub fn region_pagemap(&self) -> Vec<u64> {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::open(format!("/proc/{}/pagemap", self.pid())).unwrap();
        let mut b = vec![0u8; 64 * 8];
        f.read_exact_at(&mut b, self.region / 4096 * 8).unwrap();
        b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    pub fn rss_anon_kb(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("RssAnon:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    pub fn stop(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for Testee {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
pub struct VecSink {
    pub pages: Vec<(u64, RegionKind, Vec<u8>)>,
    pub processes: Vec<(u32, u32, String)>,
}

impl PageSink for VecSink {
    fn begin_process(&mut self, sample: u32, pid: u32, comm: &str) -> cannery_capture::Result<()> {
        self.processes.push((sample, pid, comm.to_string()));
        Ok(())
    }
    fn page(&mut self, addr: u64, region: RegionKind, data: &[u8]) -> cannery_capture::Result<()> {
        self.pages.push((addr, region, data.to_vec()));
        Ok(())
    }
}
