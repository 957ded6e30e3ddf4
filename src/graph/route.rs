//! Edges of the SVG picture that would cross a nested workflow's block (its box and the
//! nodes laid out under it) go around it instead: an edge from a workflow's box to a node
//! outside its block leaves by the box's right side and runs down beside the block, and a
//! downward edge whose curve would pass through another workflow's block bends beside it.
//! Every other edge is one curve from box to box ([`curve`]).

use super::layout::Place;

/// The curve of an edge and the point its label sits on.
pub(super) fn curve(a: Place, b: Place, lane: f64) -> (String, (f64, f64)) {
    let [p0, p1, p2, p3] = points(a, b, lane);
    let label = (
        (p0.0 + 3.0 * p1.0 + 3.0 * p2.0 + p3.0) / 8.0,
        (p0.1 + 3.0 * p1.1 + 3.0 * p2.1 + p3.1) / 8.0,
    );
    (
        format!(
            "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
            p0.0, p0.1, p1.0, p1.1, p2.0, p2.1, p3.0, p3.1
        ),
        label,
    )
}

/// The four points of an edge's curve.
pub(super) fn points(a: Place, b: Place, lane: f64) -> [(f64, f64); 4] {
    let (p0, p1, p2, p3);
    if b.y > a.y + 1.0 {
        // Down the tree: bottom centre to top centre.
        p0 = (a.cx(), a.bottom());
        p3 = (b.cx(), b.y - 2.0);
        let mid = (p0.1 + p3.1) / 2.0;
        p1 = (p0.0, mid);
        p2 = (p3.0, mid);
    } else if b.y + 1.0 < a.y {
        // Up the tree (a loop's repeat, a transfer back, an AgentTool call): out of the
        // right side, around, into the right side.
        p0 = (a.right(), a.cy());
        p3 = (b.right() + 2.0, b.cy());
        let x = a.right().max(b.right()) + 36.0 + lane;
        p1 = (x, p0.1);
        p2 = (x, p3.1);
    } else {
        // Same row (peers, trees side by side): an arc above both.
        p0 = (a.cx(), a.y);
        p3 = (b.cx(), b.y - 2.0);
        let lift = 22.0 + (a.cx() - b.cx()).abs() * 0.12 + lane;
        p1 = (p0.0, a.y - lift);
        p2 = (p3.0, b.y - lift);
    }
    [p0, p1, p2, p3]
}

/// Room kept between a rerouted edge and the block it goes around.
const GAP: f64 = 14.0;

/// Whether `p` lies inside `r` (its edges included).
fn inside(p: (f64, f64), r: &Place) -> bool {
    p.0 >= r.x && p.0 <= r.right() && p.1 >= r.y && p.1 <= r.bottom()
}

/// Whether box `b` is `r` or lies in it.
fn within(b: &Place, r: &Place) -> bool {
    b.x >= r.x - 0.5
        && b.right() <= r.right() + 0.5
        && b.y >= r.y - 0.5
        && b.bottom() <= r.bottom() + 0.5
}

/// A point of the cubic Bézier `p` at `t`.
fn at(p: [(f64, f64); 4], t: f64) -> (f64, f64) {
    let u = 1.0 - t;
    let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
    (
        a * p[0].0 + b * p[1].0 + c * p[2].0 + d * p[3].0,
        a * p[0].1 + b * p[1].1 + c * p[2].1 + d * p[3].1,
    )
}

/// The path of a downward edge from box `a` to box `b` that goes around the workflow
/// blocks (`blocks`) it would otherwise cross, and the point its label sits on; `None`
/// when the plain curve (`plain`: its four points) crosses none. `own`: the block of
/// `a` when `a` is a workflow whose block `b` lies outside; `lane`: how far beyond the
/// usual gap (each rerouted edge gets its own lane, so two never run on one line).
pub fn around(
    a: &Place,
    b: &Place,
    plain: [(f64, f64); 4],
    blocks: &[&Place],
    own: Option<&Place>,
    lane: f64,
) -> Option<(String, (f64, f64))> {
    let p3 = plain[3];
    if let Some(block) = own {
        // Out of the workflow box's right side, down beside its block, into `b`'s top.
        let p0 = (a.right(), a.cy());
        let x = block.right() + GAP + lane;
        let below = block.bottom() + (p3.1 - block.bottom()).max(0.0) / 2.0;
        let path = format!(
            "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} L{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
            p0.0,
            p0.1,
            x,
            p0.1,
            x,
            p0.1,
            x,
            a.bottom(),
            x,
            block.bottom(),
            x,
            below,
            p3.0,
            below,
            p3.0,
            p3.1
        );
        return Some((path, (x, (a.bottom() + block.bottom()) / 2.0)));
    }
    let crossed: Vec<&Place> = blocks
        .iter()
        .copied()
        .filter(|r| !within(a, r) && !within(b, r))
        .filter(|r| (1..20).any(|i| inside(at(plain, f64::from(i) / 20.0), r)))
        .collect();
    let first = crossed.first()?;
    let (mut left, mut right, mut top, mut bottom) =
        (first.x, first.right(), first.y, first.bottom());
    for r in &crossed[1..] {
        left = left.min(r.x);
        right = right.max(r.right());
        top = top.min(r.y);
        bottom = bottom.max(r.bottom());
    }
    let p0 = plain[0];
    // The nearer side of the blocks to the edge's ends.
    let mid = (p0.0 + p3.0) / 2.0;
    // The left side only when the lane stays inside the picture (x >= GAP).
    let x = if mid - left < right - mid && left - GAP - lane >= GAP {
        left - GAP - lane
    } else {
        right + GAP + lane
    };
    let y_in = top.max(p0.1 + GAP);
    let y_out = bottom.min(p3.1 - GAP).max(y_in);
    let half_in = (p0.1 + y_in) / 2.0;
    let half_out = (y_out + p3.1) / 2.0;
    let path = format!(
        "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} L{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        p0.0,
        p0.1,
        p0.0,
        half_in,
        x,
        half_in,
        x,
        y_in,
        x,
        y_out,
        x,
        half_out,
        p3.0,
        half_out,
        p3.0,
        p3.1
    );
    Some((path, (x, (y_in + y_out) / 2.0)))
}
