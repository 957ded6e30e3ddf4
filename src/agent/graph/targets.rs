//! A completion's targets, on the stack for the usual one or few.

/// A completion's targets, in order: on the stack up to eight, as a node rarely has more.
#[derive(Default)]
pub(super) struct Targets {
    len: usize,
    first: [usize; 8],
    rest: Vec<usize>,
}

impl Targets {
    /// Adds a target last.
    pub(super) fn push(&mut self, to: usize) {
        if self.len < self.first.len() {
            self.first[self.len] = to;
        } else {
            self.rest.push(to);
        }
        self.len += 1;
    }

    /// How many targets.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The targets in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let first = &self.first[..self.len.min(self.first.len())];
        first.iter().chain(self.rest.iter()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::Targets;

    #[test]
    fn targets_past_eight_keep_their_order() {
        let mut targets = Targets::default();
        assert!(targets.is_empty());
        for to in (0..11).rev() {
            targets.push(to);
        }
        assert_eq!(targets.len(), 11);
        let got: Vec<usize> = targets.iter().collect();
        assert_eq!(got, (0..11).rev().collect::<Vec<_>>());
    }
}
