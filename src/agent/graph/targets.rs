//! A completion's targets, on the stack for the usual one or few.

/// A completion's targets, in order: on the stack up to eight, as a node rarely has more
/// (all of them in `spilled` past that, so that they are always one slice).
#[derive(Default)]
pub(super) struct Targets {
    len: usize,
    first: [usize; 8],
    spilled: Vec<usize>,
}

impl Targets {
    /// Adds a target last.
    pub(super) fn push(&mut self, to: usize) {
        if self.len < self.first.len() {
            self.first[self.len] = to;
        } else {
            if self.spilled.is_empty() {
                self.spilled.extend_from_slice(&self.first);
            }
            self.spilled.push(to);
        }
        self.len += 1;
    }

    /// The targets in order.
    pub(super) fn as_slice(&self) -> &[usize] {
        if self.len <= self.first.len() {
            &self.first[..self.len]
        } else {
            &self.spilled
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Targets;

    #[test]
    fn targets_past_eight_keep_their_order() {
        let mut targets = Targets::default();
        assert!(targets.as_slice().is_empty());
        for to in (0..11).rev() {
            targets.push(to);
        }
        assert_eq!(targets.as_slice(), (0..11).rev().collect::<Vec<_>>());
    }
}
