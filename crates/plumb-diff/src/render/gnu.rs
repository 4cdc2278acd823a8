//! GNU diff's line matching (`analyze.c` and `diffseq.h` of GNU diffutils), ported so that
//! Plumb's normal-format output is line-for-line what `diff live desired` prints, as Argo CD
//! shows it. Any minimal diff is correct; GNU's choice among equally short ones comes from four
//! steps, all reproduced here: the identical first and last lines are set aside; lines that
//! occur in only one file are discarded up front (`discard_confusing_lines`); Myers' middle-snake
//! search runs on the rest (`compareseq`/`diag`, no heuristics: GNU only uses them with
//! `--speed-large-files` or past a cost of 4096, far beyond a Kubernetes object); and each run
//! of changes is slid as far down as it can go, then back to line up with a change in the other
//! file (`shift_boundaries`).

use std::collections::HashMap;

/// One change: `old_start..old_start+deleted` replaced by `new_start..new_start+inserted`
/// (0-based line indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub(crate) old_start: usize,
    pub(crate) new_start: usize,
    pub(crate) deleted: usize,
    pub(crate) inserted: usize,
}

/// The changes between two line lists, in order.
pub(crate) fn hunks(old: &[&str], new: &[&str]) -> Vec<Hunk> {
    // Identical ends are not analysed (find_identical_ends; normal output has no context).
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let a = &old[prefix..old.len() - suffix];
    let b = &new[prefix..new.len() - suffix];

    // Equivalence classes, numbered from 1.
    let mut classes: HashMap<&str, usize> = HashMap::new();
    let mut eq: [Vec<usize>; 2] = [Vec::with_capacity(a.len()), Vec::with_capacity(b.len())];
    for (f, lines) in [a, b].into_iter().enumerate() {
        for l in lines {
            let n = classes.len() + 1;
            eq[f].push(*classes.entry(l).or_insert(n));
        }
    }
    let n_classes = classes.len() + 1;

    let mut changed = [Flags::new(eq[0].len()), Flags::new(eq[1].len())];
    let (undiscarded, real) = discard_confusing_lines(&eq, n_classes, &mut changed);
    let mut ctx = Ctx {
        xv: &undiscarded[0],
        yv: &undiscarded[1],
        fd: vec![0; undiscarded[0].len() + undiscarded[1].len() + 3],
        bd: vec![0; undiscarded[0].len() + undiscarded[1].len() + 3],
        off: isize::try_from(undiscarded[1].len()).unwrap_or(0) + 1,
    };
    let mut notes = Vec::new();
    compareseq(
        &mut ctx,
        0,
        len(&undiscarded[0]),
        0,
        len(&undiscarded[1]),
        &mut notes,
    );
    for (file, idx) in notes {
        changed[file].set(real[file][idx], true);
    }
    shift_boundaries(&eq, &mut changed);
    build_script(&changed, prefix)
}

fn len<T>(v: &[T]) -> isize {
    isize::try_from(v.len()).unwrap_or(isize::MAX)
}

/// `changed[]` with GNU's sentinels: index -1 and index `len` exist and are false.
struct Flags(Vec<bool>);

impl Flags {
    fn new(n: usize) -> Self {
        Flags(vec![false; n + 2])
    }
    fn get(&self, i: isize) -> bool {
        usize::try_from(i + 1)
            .ok()
            .and_then(|i| self.0.get(i))
            .copied()
            .unwrap_or(false)
    }
    fn set(&mut self, i: usize, v: bool) {
        self.0[i + 1] = v;
    }
    fn set_at(&mut self, i: isize, v: bool) {
        if let Ok(i) = usize::try_from(i + 1) {
            self.0[i] = v;
        }
    }
}

/// GNU's `discard_confusing_lines`: lines with no match in the other file (and, in runs of
/// them, lines with very many matches) are marked changed up front and kept out of the Myers
/// search. Returns, per file, the equivalence classes of the lines left in and their indices in
/// the whole file.
fn discard_confusing_lines(
    eq: &[Vec<usize>; 2],
    n_classes: usize,
    changed: &mut [Flags; 2],
) -> ([Vec<usize>; 2], [Vec<usize>; 2]) {
    let counts = count_classes(eq, n_classes);
    let mut discards = [
        mark_discardable(&eq[0], &counts[1]),
        mark_discardable(&eq[1], &counts[0]),
    ];
    for d in &mut discards {
        settle_provisionals(d);
    }
    discard_lines(eq, &discards, changed)
}

/// How many lines of each equivalence class each file holds.
fn count_classes(eq: &[Vec<usize>; 2], n_classes: usize) -> [Vec<usize>; 2] {
    let mut counts = [vec![0usize; n_classes], vec![0usize; n_classes]];
    for f in 0..2 {
        for &c in &eq[f] {
            counts[f][c] += 1;
        }
    }
    counts
}

/// Per line of one file: 1 (discard) when the other file has no line of its class, 2
/// (provisional) when the other file has "many" of them (5, doubled for each factor of 4 from
/// 256 lines), else 0.
fn mark_discardable(equivs: &[usize], other_counts: &[usize]) -> Vec<u8> {
    let mut many = 5usize;
    let mut tem = equivs.len() / 64;
    loop {
        tem >>= 2;
        if tem == 0 {
            break;
        }
        many *= 2;
    }
    equivs
        .iter()
        .map(|&c| {
            let nmatch = other_counts[c];
            if nmatch == 0 {
                1
            } else if nmatch > many {
                2
            } else {
                0
            }
        })
        .collect()
}

/// Turns each provisional mark into a discard or a keep: a provisional line is only discarded
/// inside a run of discardable lines that is at most a quarter provisional, away from the run's
/// ends and not in a long subrun of provisionals.
fn settle_provisionals(d: &mut [u8]) {
    let end = d.len();
    let mut i = 0;
    while i < end {
        if d[i] == 2 {
            d[i] = 0;
        } else if d[i] != 0 {
            i = settle_run(d, i);
        }
        i += 1;
    }
}

/// Settles the run of discardable lines that starts at `i` (a real discard); returns the index
/// the scan goes on from.
fn settle_run(d: &mut [u8], i: usize) -> usize {
    let end = d.len();
    let mut j = i;
    let mut provisional = 0usize;
    while j < end {
        if d[j] == 0 {
            break;
        }
        if d[j] == 2 {
            provisional += 1;
        }
        j += 1;
    }
    while j > i && d[j - 1] == 2 {
        j -= 1;
        d[j] = 0;
        provisional -= 1;
    }
    let length = j - i;
    if provisional * 4 > length {
        while j > i {
            j -= 1;
            if d[j] == 2 {
                d[j] = 0;
            }
        }
        return i;
    }
    let run = &mut d[i..j];
    cancel_long_provisional_subruns(run);
    cancel_provisionals_near_end(run.iter_mut());
    cancel_provisionals_near_end(run.iter_mut().rev());
    i + length - 1
}

/// Keeps (cancels the provisional mark of) each subrun of at least `minimum` provisional lines,
/// `minimum` growing with the log of the run's length (2 under 16 lines, 3 under 64, 5 under
/// 256, 9 under 1024, ...); shorter subruns stay marked.
fn cancel_long_provisional_subruns(run: &mut [u8]) {
    let length = run.len();
    let mut minimum = 1usize;
    let mut tem = length >> 2;
    loop {
        tem >>= 2;
        if tem == 0 {
            break;
        }
        minimum <<= 1;
    }
    minimum += 1;
    let mut consec = 0usize;
    let mut j = 0usize;
    while j < length {
        if run[j] != 2 {
            consec = 0;
        } else {
            consec += 1;
            if minimum == consec {
                // Back up to the start of the subrun, to cancel it all.
                j -= consec;
            } else if minimum < consec {
                run[j] = 0;
            }
        }
        j += 1;
    }
}

/// Scanning in from one end of a run: keeps provisional lines until three real discards in a
/// row are met (or a real discard past the eighth line).
fn cancel_provisionals_near_end<'a>(run: impl Iterator<Item = &'a mut u8>) {
    let mut consec = 0usize;
    for (j, d) in run.enumerate() {
        if j >= 8 && *d == 1 {
            break;
        }
        if *d == 2 {
            consec = 0;
            *d = 0;
        } else if *d == 0 {
            consec = 0;
        } else {
            consec += 1;
        }
        if consec == 3 {
            break;
        }
    }
}

/// Marks the discarded lines changed and returns the others' classes and indices.
fn discard_lines(
    eq: &[Vec<usize>; 2],
    discards: &[Vec<u8>; 2],
    changed: &mut [Flags; 2],
) -> ([Vec<usize>; 2], [Vec<usize>; 2]) {
    let mut undiscarded = [Vec::new(), Vec::new()];
    let mut real = [Vec::new(), Vec::new()];
    for f in 0..2 {
        for (i, &c) in eq[f].iter().enumerate() {
            if discards[f][i] == 0 {
                undiscarded[f].push(c);
                real[f].push(i);
            } else {
                changed[f].set(i, true);
            }
        }
    }
    (undiscarded, real)
}

struct Ctx<'a> {
    xv: &'a [usize],
    yv: &'a [usize],
    fd: Vec<isize>,
    bd: Vec<isize>,
    /// Diagonal k is stored at index k + off (diagonals run from -len(y)-1 to len(x)+1).
    off: isize,
}

impl Ctx<'_> {
    fn eq(&self, x: isize, y: isize) -> bool {
        self.xv[x as usize] == self.yv[y as usize]
    }
    fn fd(&mut self, d: isize) -> &mut isize {
        let i = usize::try_from(d + self.off).unwrap_or(0);
        &mut self.fd[i]
    }
    fn bd(&mut self, d: isize) -> &mut isize {
        let i = usize::try_from(d + self.off).unwrap_or(0);
        &mut self.bd[i]
    }
}

/// The middle snake (`diag` with `find_minimal` and no heuristic): returns (xmid, ymid).
fn diag(c: &mut Ctx<'_>, xoff: isize, xlim: isize, yoff: isize, ylim: isize) -> (isize, isize) {
    let dmin = xoff - ylim;
    let dmax = xlim - yoff;
    let fmid = xoff - yoff;
    let bmid = xlim - ylim;
    let (mut fmin, mut fmax, mut bmin, mut bmax) = (fmid, fmid, bmid, bmid);
    let odd = (fmid - bmid) & 1 != 0;
    *c.fd(fmid) = xoff;
    *c.bd(bmid) = xlim;
    loop {
        if fmin > dmin {
            fmin -= 1;
            *c.fd(fmin - 1) = -1;
        } else {
            fmin += 1;
        }
        if fmax < dmax {
            fmax += 1;
            *c.fd(fmax + 1) = -1;
        } else {
            fmax -= 1;
        }
        let mut d = fmax;
        while d >= fmin {
            let tlo = *c.fd(d - 1);
            let thi = *c.fd(d + 1);
            let x0 = if tlo < thi { thi } else { tlo + 1 };
            let (mut x, mut y) = (x0, x0 - d);
            while x < xlim && y < ylim && c.eq(x, y) {
                x += 1;
                y += 1;
            }
            *c.fd(d) = x;
            if odd && bmin <= d && d <= bmax && *c.bd(d) <= x {
                return (x, y);
            }
            d -= 2;
        }
        if bmin > dmin {
            bmin -= 1;
            *c.bd(bmin - 1) = isize::MAX;
        } else {
            bmin += 1;
        }
        if bmax < dmax {
            bmax += 1;
            *c.bd(bmax + 1) = isize::MAX;
        } else {
            bmax -= 1;
        }
        let mut d = bmax;
        while d >= bmin {
            let tlo = *c.bd(d - 1);
            let thi = *c.bd(d + 1);
            let x0 = if tlo < thi { tlo } else { thi - 1 };
            let (mut x, mut y) = (x0, x0 - d);
            while xoff < x && yoff < y && c.eq(x - 1, y - 1) {
                x -= 1;
                y -= 1;
            }
            *c.bd(d) = x;
            if !odd && fmin <= d && d <= fmax && x <= *c.fd(d) {
                return (x, y);
            }
            d -= 2;
        }
    }
}

/// Records deleted (file 0) and inserted (file 1) undiscarded indices.
fn compareseq(
    c: &mut Ctx<'_>,
    mut xoff: isize,
    mut xlim: isize,
    mut yoff: isize,
    mut ylim: isize,
    notes: &mut Vec<(usize, usize)>,
) {
    while xoff < xlim && yoff < ylim && c.eq(xoff, yoff) {
        xoff += 1;
        yoff += 1;
    }
    while xoff < xlim && yoff < ylim && c.eq(xlim - 1, ylim - 1) {
        xlim -= 1;
        ylim -= 1;
    }
    if xoff == xlim {
        notes.extend((yoff..ylim).map(|y| (1, y as usize)));
    } else if yoff == ylim {
        notes.extend((xoff..xlim).map(|x| (0, x as usize)));
    } else {
        let (xmid, ymid) = diag(c, xoff, xlim, yoff, ylim);
        compareseq(c, xoff, xmid, yoff, ymid, notes);
        compareseq(c, xmid, xlim, ymid, ylim, notes);
    }
}

/// GNU's `shift_boundaries`: in each file in turn, every run of changes is slid down as far as
/// equal lines allow, then back up to line up with a run of changes in the other file.
fn shift_boundaries(eq: &[Vec<usize>; 2], changed: &mut [Flags; 2]) {
    for (f, equivs) in eq.iter().enumerate() {
        let (lo, hi) = changed.split_at_mut(1);
        let (ch, other) = if f == 0 {
            (&mut lo[0], &hi[0])
        } else {
            (&mut hi[0], &lo[0])
        };
        shift_file(equivs, ch, other);
    }
}

/// One file's pass: finds each run of changes in `ch`, keeping `j` on the matching line of the
/// other file, and slides it.
fn shift_file(equivs: &[usize], ch: &mut Flags, other: &Flags) {
    let i_end = len(equivs);
    let (mut i, mut j): (isize, isize) = (0, 0);
    loop {
        while i < i_end && !ch.get(i) {
            loop {
                let was = other.get(j);
                j += 1;
                if !was {
                    break;
                }
            }
            i += 1;
        }
        if i == i_end {
            break;
        }
        let start = i;
        loop {
            i += 1;
            if !ch.get(i) {
                break;
            }
        }
        while other.get(j) {
            j += 1;
        }
        (i, j) = slide_run(equivs, ch, other, start, i, j);
    }
}

/// Slides the run `start..i` up, then down, while the lines at its ends are equal (merging with
/// runs it meets) until its length settles, then back up until its end lines up with a change
/// in the other file, if one was passed. Returns the new `i` and `j`.
fn slide_run(
    equivs: &[usize],
    ch: &mut Flags,
    other: &Flags,
    mut start: isize,
    mut i: isize,
    mut j: isize,
) -> (isize, isize) {
    let i_end = len(equivs);
    let e = |i: isize| equivs[i as usize];
    let mut corresponding;
    loop {
        let runlength = i - start;
        while start > 0 && e(start - 1) == e(i - 1) {
            start -= 1;
            ch.set_at(start, true);
            i -= 1;
            ch.set_at(i, false);
            while ch.get(start - 1) {
                start -= 1;
            }
            loop {
                j -= 1;
                if !other.get(j) {
                    break;
                }
            }
        }
        corresponding = if other.get(j - 1) { i } else { i_end };
        while i != i_end && e(start) == e(i) {
            ch.set_at(start, false);
            start += 1;
            ch.set_at(i, true);
            i += 1;
            while ch.get(i) {
                i += 1;
            }
            loop {
                j += 1;
                if !other.get(j) {
                    break;
                }
                corresponding = i;
            }
        }
        if runlength == i - start {
            break;
        }
    }
    while corresponding < i {
        start -= 1;
        ch.set_at(start, true);
        i -= 1;
        ch.set_at(i, false);
        loop {
            j -= 1;
            if !other.get(j) {
                break;
            }
        }
    }
    (i, j)
}

fn build_script(changed: &[Flags; 2], prefix: usize) -> Vec<Hunk> {
    let mut out = Vec::new();
    let n0 = isize::try_from(changed[0].0.len()).unwrap_or(0) - 2;
    let n1 = isize::try_from(changed[1].0.len()).unwrap_or(0) - 2;
    let (mut i0, mut i1) = (n0, n1);
    while i0 >= 0 || i1 >= 0 {
        if changed[0].get(i0 - 1) || changed[1].get(i1 - 1) {
            let (line0, line1) = (i0, i1);
            while changed[0].get(i0 - 1) {
                i0 -= 1;
            }
            while changed[1].get(i1 - 1) {
                i1 -= 1;
            }
            out.push(Hunk {
                old_start: prefix + i0 as usize,
                new_start: prefix + i1 as usize,
                deleted: (line0 - i0) as usize,
                inserted: (line1 - i1) as usize,
            });
        }
        i0 -= 1;
        i1 -= 1;
    }
    out.reverse();
    out
}
