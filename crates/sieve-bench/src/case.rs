//! A benchmark case: op, input shape, dtype and op parameters, parsed from and printed as
//! `op:shape:dtype[:key=value,...]`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The ops the bench times: a case's `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// The bandwidth reference row (a plain device copy), which every report starts with.
    Copy,
    Cumsum,
    Cumprod,
    Cummin,
    Cummax,
    MaskSelect,
    Argwhere,
    CompactRows,
    SortWithIndices,
    Sort,
    Argsort,
    StablePartition,
    SplitByBit,
    TopkWithIndices,
    /// `sieve_burn::sampling::top_k_top_p_sample` of `[batch, vocab]` logits.
    TopKTopPSample,
    /// `sieve_burn::unique` of f32 values (params `distinct=`: how many distinct values).
    Unique,
    /// `sieve_burn::searchsorted` of the case's queries into `keys=` sorted keys.
    Searchsorted,
}

/// Which runner times an op (`cumsum.rs`, `filter.rs`, `sort.rs`, `topk.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Copy,
    Scan,
    Filter,
    Sort,
    Topk,
    Sample,
    Sets,
}

impl Op {
    pub const ALL: [Op; 17] = [
        Op::Copy,
        Op::Cumsum,
        Op::Cumprod,
        Op::Cummin,
        Op::Cummax,
        Op::MaskSelect,
        Op::Argwhere,
        Op::CompactRows,
        Op::SortWithIndices,
        Op::Sort,
        Op::Argsort,
        Op::StablePartition,
        Op::SplitByBit,
        Op::TopkWithIndices,
        Op::TopKTopPSample,
        Op::Unique,
        Op::Searchsorted,
    ];

    /// The op's name in cases and rows (the Burn op's name).
    pub fn name(self) -> &'static str {
        match self {
            Op::Copy => "copy",
            Op::Cumsum => "cumsum",
            Op::Cumprod => "cumprod",
            Op::Cummin => "cummin",
            Op::Cummax => "cummax",
            Op::MaskSelect => "mask_select",
            Op::Argwhere => "argwhere",
            Op::CompactRows => "compact_rows",
            Op::SortWithIndices => "sort_with_indices",
            Op::Sort => "sort",
            Op::Argsort => "argsort",
            Op::StablePartition => "stable_partition",
            Op::SplitByBit => "split_by_bit",
            Op::TopkWithIndices => "topk_with_indices",
            Op::TopKTopPSample => "top_k_top_p_sample",
            Op::Unique => "unique",
            Op::Searchsorted => "searchsorted",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Op::Copy => Family::Copy,
            Op::Cumsum | Op::Cumprod | Op::Cummin | Op::Cummax => Family::Scan,
            Op::MaskSelect | Op::Argwhere | Op::CompactRows => Family::Filter,
            Op::SortWithIndices | Op::Sort | Op::Argsort | Op::StablePartition | Op::SplitByBit => {
                Family::Sort
            }
            Op::TopkWithIndices => Family::Topk,
            Op::TopKTopPSample => Family::Sample,
            Op::Unique | Op::Searchsorted => Family::Sets,
        }
    }

    fn parse(name: &str) -> Result<Op, String> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Op::ALL.iter().map(|op| op.name()).collect();
                format!("unknown op `{name}` (ops: {})", names.join(", "))
            })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone)]
pub struct Case {
    pub op: Op,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub params: Params,
}

/// A case's `key=value` params. [`Params::get`] remembers the keys asked for, so that a key
/// no bench asked for (misspelt, or a tuning key that is gone) is named after the case ran
/// ([`Params::unread`]) instead of its rows timing the defaults in silence.
#[derive(Debug, Clone, Default)]
pub struct Params {
    map: BTreeMap<String, String>,
    asked: RefCell<BTreeSet<String>>,
}

impl Params {
    /// The value of `key`, remembering that it was asked for.
    pub fn get(&self, key: &str) -> Option<&String> {
        self.asked.borrow_mut().insert(key.to_owned());
        self.map.get(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` unless the case names it already (`--with` params).
    pub fn insert_if_absent(&mut self, key: &str, value: &str) {
        self.map
            .entry(key.to_owned())
            .or_insert_with(|| value.to_owned());
    }

    /// Every param in key order, for reports and names (not counted as asked for).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.map.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The keys nothing asked for, but those in `ignore`.
    pub fn unread(&self, ignore: &[&str]) -> Vec<String> {
        let asked = self.asked.borrow();
        self.map
            .keys()
            .filter(|k| !asked.contains(*k) && !ignore.contains(&k.as_str()))
            .cloned()
            .collect()
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for Params {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(iter: I) -> Self {
        Params {
            map: iter
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            asked: RefCell::default(),
        }
    }
}

impl Case {
    pub fn new(op: Op, shape: &[usize], dtype: &str, params: &[(&str, &str)]) -> Self {
        Case {
            op,
            shape: shape.to_vec(),
            dtype: dtype.into(),
            params: params.iter().copied().collect(),
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        if !(3..=4).contains(&parts.len()) {
            return Err("expected op:shape:dtype[:key=value,...]".into());
        }
        let shape = parts[1]
            .split('x')
            .map(|d| {
                d.parse::<usize>()
                    .map_err(|e| format!("shape `{}`: {e}", parts[1]))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut params = Params::default();
        if let Some(list) = parts.get(3) {
            for kv in list.split(',').filter(|kv| !kv.is_empty()) {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or(format!("param `{kv}` is not key=value"))?;
                params.map.insert(k.to_string(), v.to_string());
            }
        }
        Ok(Case {
            op: Op::parse(parts[0])?,
            shape,
            dtype: parts[2].into(),
            params,
        })
    }

    /// Panics unless the case's dtype is one of `allowed` (the ones its bench defines): a
    /// misspelt case (`i32,k=8` for `i32:k=8`) must not run with other data than it names.
    pub fn require_dtype(&self, allowed: &[&str]) {
        assert!(
            allowed.contains(&self.dtype.as_str()),
            "{} bench: dtype `{}` is not one of {allowed:?} (case syntax: op:shape:dtype[:key=value,...])",
            self.op,
            self.dtype
        );
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The `key=` param as a `u32` (tuning overrides), `None` when the case does not name it.
    pub fn param_u32(&self, key: &str) -> Option<u32> {
        self.params
            .get(key)
            .map(|v| v.parse::<u32>().expect("an integer"))
    }

    /// Every combination of the case's values of the tuning params `keys`, each a value or
    /// several split by `/` (`epu=24/32,window=4/8`: four combinations, each its own raw row
    /// on the same input, checked and timed; a sweep pays the data and the reference once);
    /// one [`Sweep::is_default`] combination when the case names none of them.
    pub fn sweep(&self, keys: &[&'static str]) -> Vec<Sweep> {
        let mut combos = vec![Sweep::default()];
        for &key in keys {
            let Some(values) = self.params.get(key) else {
                continue;
            };
            let values: Vec<u32> = values
                .split('/')
                .map(|v| {
                    v.parse()
                        .unwrap_or_else(|_| panic!("{self}: `{key}` = {v} is not an integer"))
                })
                .collect();
            combos = combos
                .into_iter()
                .flat_map(|combo| {
                    values.iter().map(move |&v| {
                        let mut c = combo.clone();
                        c.0.push((key, v));
                        c
                    })
                })
                .collect();
        }
        combos
    }

    /// [`Case::sweep`] as tunings: `make` builds each combination's over the device's
    /// defaults; `None` (the defaults, untouched) where the case names none of `keys`.
    pub fn tunings<T>(&self, keys: &[&'static str], make: impl Fn(&Sweep) -> T) -> Vec<Swept<T>> {
        self.sweep(keys)
            .into_iter()
            .map(|s| (s.params(), (!s.is_default()).then(|| make(&s))))
            .collect()
    }

    /// The raw rows the case asks for: each of `strategies` (`raw=` names one by `name`;
    /// `none`: no raw rows) at each of `tunings`, with the row params they add (the
    /// strategy's name and the sweep's values).
    pub fn raw_runs<'a, S: Copy, T: Copy>(
        &self,
        strategies: impl IntoIterator<Item = S>,
        name: impl Fn(S) -> &'static str,
        tunings: &'a [Swept<T>],
    ) -> Vec<RawRun<'a, S, T>> {
        let only: String = self.param_or("raw", String::from("all"));
        strategies
            .into_iter()
            .filter(|&s| only == "all" || only == name(s))
            .flat_map(|strategy| {
                let name = name(strategy);
                tunings.iter().map(move |(swept, tuning)| RawRun {
                    strategy,
                    tuning: *tuning,
                    params: [("strategy", name)]
                        .into_iter()
                        .chain(swept.iter().map(|(k, v)| (*k, v.as_str())))
                        .collect(),
                })
            })
            .collect()
    }

    /// Param `key` parsed, or `default` when the case has none.
    pub fn param_or<T: std::str::FromStr>(&self, key: &str, default: T) -> T {
        self.params.get(key).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{self}: param `{key}` = {v} does not parse"))
        })
    }

    pub fn dim(&self) -> usize {
        self.params
            .get("dim")
            .map(|d| d.parse().expect("dim must be an integer"))
            .unwrap_or(self.shape.len() - 1)
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        write!(f, "{}:{}:{}", self.op, shape.join("x"), self.dtype)?;
        if !self.params.is_empty() {
            let kv: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            write!(f, ":{}", kv.join(","))?;
        }
        Ok(())
    }
}

/// A tuning of a case's sweep ([`Case::tunings`]): the values it took (row params) and the
/// tuning (`None`: the device's defaults).
pub type Swept<T> = (Vec<(&'static str, String)>, Option<T>);

/// One raw row of a case ([`Case::raw_runs`]).
pub struct RawRun<'a, S, T> {
    pub strategy: S,
    /// `None`: the device's default tuning.
    pub tuning: Option<T>,
    /// The row's params besides the case's: the strategy's name and the sweep's values.
    pub params: Vec<(&'static str, &'a str)>,
}

/// One combination of a case's tuning sweep ([`Case::sweep`]): each swept param's value.
#[derive(Debug, Clone, Default)]
pub struct Sweep(Vec<(&'static str, u32)>);

impl Sweep {
    /// The value this combination gives `key`; `None` where the case does not name it.
    pub fn get(&self, key: &str) -> Option<u32> {
        self.0.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }

    /// The values it took, as row params (they replace the case's `/` lists).
    pub fn params(&self) -> Vec<(&'static str, String)> {
        self.0.iter().map(|&(k, v)| (k, v.to_string())).collect()
    }

    /// The case names none of the swept params: the device's default tuning.
    pub fn is_default(&self) -> bool {
        self.0.is_empty()
    }
}

/// The standard rows of the issue, or small ones for a smoke run.
pub fn standard(quick: bool) -> Vec<Case> {
    if quick {
        return vec![
            Case::new(Op::Cumsum, &[1 << 16], "f32", &[("dim", "0")]),
            Case::new(Op::Cumsum, &[64, 1024], "f32", &[("dim", "0")]),
            Case::new(Op::Cumsum, &[64, 1024], "f32", &[("dim", "1")]),
            Case::new(Op::Cummax, &[64, 1024], "f32", &[("dim", "1")]),
            Case::new(Op::Cummin, &[64, 1024], "i32", &[("dim", "1")]),
            Case::new(Op::MaskSelect, &[1 << 16], "f32", &[("density", "0.5")]),
            Case::new(Op::Argwhere, &[1 << 16], "bool", &[("density", "0.5")]),
            Case::new(Op::CompactRows, &[8, 4096], "f32", &[("density", "0.1")]),
            Case::new(Op::SortWithIndices, &[1 << 17], "f32", &[]),
            Case::new(Op::Sort, &[64, 128], "i32", &[]),
            Case::new(Op::Argsort, &[4096], "f32", &[("descending", "true")]),
            Case::new(
                Op::StablePartition,
                &[1 << 12],
                "f32",
                &[("density", "0.5")],
            ),
            Case::new(Op::SplitByBit, &[1 << 12], "i32", &[]),
            Case::new(Op::TopkWithIndices, &[1 << 14], "f32", &[("k", "10")]),
            Case::new(Op::TopkWithIndices, &[64, 128], "f32", &[("k", "8")]),
            Case::new(Op::TopKTopPSample, &[8, 4096], "f32", &SAMPLE),
            Case::new(Op::Unique, &[1 << 14], "f32", &[("distinct", "1000")]),
            Case::new(Op::Searchsorted, &[1 << 14], "f32", &[("keys", "4096")]),
        ];
    }
    vec![
        Case::new(Op::Cumsum, &[1 << 20], "f32", &[("dim", "0")]),
        Case::new(Op::Cumsum, &[1 << 24], "f32", &[("dim", "0")]),
        Case::new(Op::Cumsum, &[1 << 28], "f32", &[("dim", "0")]),
        Case::new(Op::Cumsum, &[4096, 32768], "f32", &[("dim", "0")]),
        Case::new(Op::Cumsum, &[4096, 32768], "f32", &[("dim", "1")]),
        // The rest of the cumulative family on the same scan (stock Burn at 2^20 only).
        Case::new(Op::Cumprod, &[1 << 20], "f32", &[("dim", "0")]),
        Case::new(Op::Cumprod, &[1 << 24], "f32", &[("dim", "0")]),
        Case::new(Op::Cumprod, &[1 << 28], "f32", &[("dim", "0")]),
        Case::new(Op::Cumprod, &[4096, 32768], "f32", &[("dim", "1")]),
        Case::new(Op::Cummin, &[1 << 20], "f32", &[("dim", "0")]),
        Case::new(Op::Cummin, &[1 << 24], "f32", &[("dim", "0")]),
        Case::new(Op::Cummin, &[1 << 28], "f32", &[("dim", "0")]),
        Case::new(Op::Cummin, &[4096, 32768], "f32", &[("dim", "1")]),
        Case::new(Op::Cummax, &[1 << 20], "f32", &[("dim", "0")]),
        Case::new(Op::Cummax, &[1 << 24], "f32", &[("dim", "0")]),
        Case::new(Op::Cummax, &[1 << 28], "f32", &[("dim", "0")]),
        Case::new(Op::Cummax, &[4096, 32768], "f32", &[("dim", "1")]),
        Case::new(Op::MaskSelect, &[1 << 24], "f32", &[("density", "0.5")]),
        Case::new(Op::MaskSelect, &[1 << 24], "f32", &[("density", "0.01")]),
        Case::new(Op::MaskSelect, &[1 << 28], "f32", &[("density", "0.5")]),
        Case::new(Op::MaskSelect, &[1 << 28], "f32", &[("density", "0.01")]),
        Case::new(Op::Argwhere, &[1 << 24], "bool", &[("density", "0.5")]),
        Case::new(Op::Argwhere, &[1 << 28], "bool", &[("density", "0.5")]),
        Case::new(
            Op::CompactRows,
            &[64, 1 << 20],
            "f32",
            &[("density", "0.1")],
        ),
        Case::new(Op::SortWithIndices, &[1 << 24], "f32", &[]),
        Case::new(Op::SortWithIndices, &[1 << 28], "f32", &[]),
        Case::new(Op::Argsort, &[1 << 28], "f32", &[]),
        Case::new(Op::Sort, &[1 << 28], "i32", &[]),
        Case::new(Op::SortWithIndices, &[4096, 32768], "f32", &[]),
        Case::new(Op::SortWithIndices, &[16384, 128], "f32", &[]),
        Case::new(
            Op::SortWithIndices,
            &[64, 128256],
            "f32",
            &[("descending", "true")],
        ),
        Case::new(
            Op::StablePartition,
            &[1 << 28],
            "f32",
            &[("density", "0.5")],
        ),
        Case::new(Op::SplitByBit, &[1 << 28], "i32", &[]),
        Case::new(Op::TopkWithIndices, &[1 << 24], "f32", &[("k", "10")]),
        Case::new(Op::TopkWithIndices, &[1 << 24], "f32", &[("k", "1000")]),
        Case::new(Op::TopkWithIndices, &[1 << 24], "f32", &[("k", "100000")]),
        Case::new(Op::TopkWithIndices, &[1 << 28], "f32", &[("k", "10")]),
        Case::new(Op::TopkWithIndices, &[1 << 28], "f32", &[("k", "1000")]),
        Case::new(Op::TopkWithIndices, &[1 << 28], "f32", &[("k", "100000")]),
        Case::new(
            Op::TopkWithIndices,
            &[1 << 28],
            "f32",
            &[("k", "1000"), ("dist", "all_equal")],
        ),
        Case::new(Op::TopkWithIndices, &[4096, 32768], "f32", &[("k", "64")]),
        Case::new(Op::TopkWithIndices, &[16384, 128], "f32", &[("k", "8")]),
        Case::new(Op::TopkWithIndices, &[64, 128256], "f32", &[("k", "50")]),
        Case::new(Op::TopkWithIndices, &[64, 128256], "f32", &[("k", "1000")]),
        Case::new(
            Op::TopkWithIndices,
            &[64, 128256],
            "f32",
            &[("k", "50"), ("dist", "tied")],
        ),
        Case::new(
            Op::TopkWithIndices,
            &[64, 128256],
            "f32",
            &[("k", "1000"), ("dist", "tied")],
        ),
        // Sampling at LLM vocabulary sizes (issue 17; torch's sampler in the same call).
        Case::new(Op::TopKTopPSample, &[64, 128256], "f32", &SAMPLE),
        Case::new(Op::TopKTopPSample, &[64, 128256], "bf16", &SAMPLE),
        Case::new(Op::TopKTopPSample, &[256, 128256], "f32", &SAMPLE),
        Case::new(Op::TopKTopPSample, &[256, 128256], "bf16", &SAMPLE),
        // Set operations against torch.unique(sorted=True) and torch.searchsorted.
        Case::new(Op::Unique, &[1 << 24], "f32", &[("distinct", "1048576")]),
        Case::new(Op::Unique, &[1 << 28], "f32", &[("distinct", "1048576")]),
        Case::new(Op::Searchsorted, &[1 << 24], "f32", &[("keys", "1048576")]),
    ]
}

/// The sampling rows' parameters: top-k 50, top-p 0.9, temperature 0.8.
const SAMPLE: [(&str, &str); 3] = [("k", "50"), ("p", "0.9"), ("t", "0.8")];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_nothing_asked_for_are_named() {
        let mut case = Case::parse("topk_with_indices:1024:f32:k=8,l2=1,split=4").unwrap();
        case.params.insert_if_absent("raw", "none");
        assert_eq!(case.param_or("k", 0u32), 8);
        let _ = case.sweep(&["split", "units"]);
        assert_eq!(case.params.unread(&["raw"]), vec!["l2".to_string()]);
        assert_eq!(
            case.params.unread(&[]),
            vec!["l2".to_string(), "raw".to_string()]
        );
        // Listing the params (reports, the case's name) asks for none of them.
        assert_eq!(
            case.to_string(),
            "topk_with_indices:1024:f32:k=8,l2=1,raw=none,split=4"
        );
        assert_eq!(case.params.unread(&["raw"]), vec!["l2".to_string()]);
    }
}
