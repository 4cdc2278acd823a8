//! Go's `text/tabwriter`, the part Argo CD's CLI uses: tab-terminated cells aligned in column
//! blocks, left-aligned, padded with spaces, no flags. Argo writes every table through
//! `tabwriter.NewWriter(os.Stdout, minwidth, 0, 2, ' ', 0)`, so matching its layouts byte for byte
//! means reproducing the algorithm, trailing spaces of empty cells included.
//!
//! A column block is a run of consecutive lines that all have a tab-terminated cell in that
//! column; the text after a line's last tab is not part of any column and is never padded. A line
//! without tabs (a blank line) therefore ends every block, as in Go.

/// Collects lines and formats them on [`Table::render`].
#[derive(Debug, Clone, Default)]
pub struct Table {
    minwidth: usize,
    padding: usize,
    lines: Vec<Vec<String>>,
}

impl Table {
    /// A table with Argo's usual settings (minwidth 0, padding 2).
    pub fn new() -> Self {
        Self::with(0, 2)
    }

    /// A table with Go's `minwidth` and `padding` parameters.
    pub fn with(minwidth: usize, padding: usize) -> Self {
        Self {
            minwidth,
            padding,
            lines: Vec::new(),
        }
    }

    /// Adds one line made of tab-separated text (what Argo passes to `fmt.Fprintf(w, ...)`).
    pub fn line(&mut self, text: &str) {
        self.lines
            .push(text.split('\t').map(str::to_string).collect());
    }

    /// Adds one line from its cells: every cell but the last is tab-terminated.
    pub fn row<S: AsRef<str>>(&mut self, cells: &[S]) {
        self.lines
            .push(cells.iter().map(|c| c.as_ref().to_string()).collect());
    }

    /// The formatted text, each line ending in `\n`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut widths = Vec::new();
        self.format(&mut out, &mut widths, 0, self.lines.len());
        out
    }

    // Go's `(*Writer).format`: find the blocks of column `widths.len()`, size each one, recurse
    // to the columns on its right, print the lines that end before the next block.
    fn format(&self, out: &mut String, widths: &mut Vec<usize>, line0: usize, line1: usize) {
        let column = widths.len();
        let mut start = line0;
        let mut this = line0;
        while this < line1 {
            if column + 1 >= self.lines[this].len() {
                this += 1;
                continue;
            }
            self.write_lines(out, widths, start, this);
            start = this;
            let mut width = self.minwidth;
            while this < line1 && column + 1 < self.lines[this].len() {
                width = width.max(cell_width(&self.lines[this][column]) + self.padding);
                this += 1;
            }
            widths.push(width);
            self.format(out, widths, start, this);
            widths.pop();
            start = this;
        }
        self.write_lines(out, widths, start, line1);
    }

    fn write_lines(&self, out: &mut String, widths: &[usize], line0: usize, line1: usize) {
        for line in &self.lines[line0..line1] {
            for (j, cell) in line.iter().enumerate() {
                out.push_str(cell);
                if let Some(&w) = widths.get(j) {
                    let pad = w.saturating_sub(cell_width(cell));
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push('\n');
        }
    }
}

/// Display width as Go's tabwriter counts it: one per rune.
fn cell_width(text: &str) -> usize {
    text.chars().count()
}

/// Go's `%Ns`: right-aligned in `width` runes (never truncated).
pub fn right(text: &str, width: usize) -> String {
    let len = cell_width(text);
    if len >= width {
        text.to_string()
    } else {
        format!("{}{text}", " ".repeat(width - len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pad_to_widest_cell_plus_padding_and_last_cell_is_free() {
        let mut t = Table::new();
        t.line("GROUP\tKIND\tNAME\tMESSAGE");
        t.line("\tService\tpayments-api\t");
        t.line("apps\tDeployment\tpayments-api\tWaiting for rollout");
        assert_eq!(
            t.render(),
            "GROUP  KIND        NAME          MESSAGE\n\
             \x20      Service     payments-api  \n\
             apps   Deployment  payments-api  Waiting for rollout\n"
        );
    }

    #[test]
    fn a_line_without_tabs_ends_the_column_block() {
        let mut t = Table::new();
        t.line("a\tb");
        t.line("");
        t.line("longer\tc");
        assert_eq!(t.render(), "a  b\n\nlonger  c\n");
    }

    #[test]
    fn minwidth_applies_to_cell_plus_padding() {
        let mut t = Table::with(5, 2);
        t.line("ab\t\tx");
        assert_eq!(t.render(), "ab   \x20    x\n");
        assert_eq!(right("KIND", 10), "      KIND");
        assert_eq!(right("Deployment-long", 10), "Deployment-long");
    }

    #[test]
    fn shorter_lines_inside_a_block_split_deeper_columns() {
        // Column 1 exists only on the first and third lines: two separate blocks for it.
        let mut t = Table::new();
        t.line("x\ty\tz");
        t.line("x\tlast");
        t.line("x\tyyyy\tz");
        assert_eq!(t.render(), "x  y  z\nx  last\nx  yyyy  z\n");
    }
}
