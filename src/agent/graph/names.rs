//! The names a workflow run gives: a node run's path (`PARENT/NAME@RUN`) and the branch
//! a JoinNode runs on (the common prefix of its predecessors' branches).

use std::sync::Arc;

/// `PARENT/NAME@RUN`, without the formatting machinery, in one allocation.
pub(super) fn node_path(parent: &str, name: &str, run: u32) -> Arc<str> {
    let mut digits = [0u8; 10];
    let mut k = digits.len();
    let mut r = run;
    loop {
        k -= 1;
        digits[k] = b'0' + (r % 10) as u8;
        r /= 10;
        if r == 0 {
            break;
        }
    }
    let digits = std::str::from_utf8(&digits[k..]).unwrap_or("0");
    let parts = [parent, "/", name, "@", digits];
    // `Arc<str>` from a `String` would copy it into a second allocation; a path up to
    // 256 bytes is assembled on the stack first.
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut buf = [0u8; 256];
    if len <= buf.len() {
        let mut at = 0;
        for p in parts {
            buf[at..at + p.len()].copy_from_slice(p.as_bytes());
            at += p.len();
        }
        if let Ok(path) = std::str::from_utf8(&buf[..len]) {
            return Arc::from(path);
        }
    }
    Arc::from(parts.concat())
}

/// The common dot-separated prefix of branches (`a.b@1` and `a.c@1`: `a`).
pub(super) fn common_prefix(branches: &[String]) -> String {
    let split: Vec<Vec<&str>> = branches
        .iter()
        .map(|b| {
            if b.is_empty() {
                Vec::new()
            } else {
                b.split('.').collect()
            }
        })
        .collect();
    let Some(first) = split.first() else {
        return String::new();
    };
    let mut out = Vec::new();
    for (k, seg) in first.iter().enumerate() {
        if split.iter().all(|s| s.get(k) == Some(seg)) {
            out.push(*seg);
        } else {
            break;
        }
    }
    out.join(".")
}

#[cfg(test)]
mod tests {
    #[test]
    fn node_paths() {
        assert_eq!(&*super::node_path("wf@1", "judge", 1), "wf@1/judge@1");
        assert_eq!(
            &*super::node_path("a@1/b@2", "c", 4_294_967_295),
            "a@1/b@2/c@4294967295"
        );
        assert_eq!(&*super::node_path("w@1", "n", 10), "w@1/n@10");
        assert_eq!(&*super::node_path("w@1", "n", 0), "w@1/n@0");
        let long = "p".repeat(300);
        assert_eq!(&*super::node_path(&long, "n", 2), format!("{long}/n@2"));
    }
}
