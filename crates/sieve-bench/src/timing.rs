//! Device-synchronised timing: warm-up, then `runs` timed calls, each ended by a device sync.

use std::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

/// Times `run` (which must finish with a device sync). Two warm-up calls keep compilation
/// and first allocations out of the numbers.
pub fn time(runs: usize, mut run: impl FnMut()) -> Stats {
    run();
    run();
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    Stats {
        median_ms: ms[ms.len() / 2],
        min_ms: ms[0],
        max_ms: ms[ms.len() - 1],
    }
}
