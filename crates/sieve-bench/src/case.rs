//! A benchmark case: op, input shape, dtype and op parameters, parsed from and printed as
//! `op:shape:dtype[:key=value,...]`.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone)]
pub struct Case {
    pub op: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub params: BTreeMap<String, String>,
}

impl Case {
    pub fn new(op: &str, shape: &[usize], dtype: &str, params: &[(&str, &str)]) -> Self {
        Case {
            op: op.into(),
            shape: shape.to_vec(),
            dtype: dtype.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
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
        let mut params = BTreeMap::new();
        if let Some(list) = parts.get(3) {
            for kv in list.split(',').filter(|kv| !kv.is_empty()) {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or(format!("param `{kv}` is not key=value"))?;
                params.insert(k.to_string(), v.to_string());
            }
        }
        Ok(Case {
            op: parts[0].into(),
            shape,
            dtype: parts[2].into(),
            params,
        })
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

/// The standard rows of the issue, or small ones for a smoke run.
pub fn standard(quick: bool) -> Vec<Case> {
    if quick {
        return vec![
            Case::new("cumsum", &[1 << 16], "f32", &[("dim", "0")]),
            Case::new("cumsum", &[64, 1024], "f32", &[("dim", "0")]),
            Case::new("cumsum", &[64, 1024], "f32", &[("dim", "1")]),
            Case::new("cummax", &[64, 1024], "f32", &[("dim", "1")]),
            Case::new("mask_select", &[1 << 16], "f32", &[("density", "0.5")]),
            Case::new("argwhere", &[1 << 16], "bool", &[("density", "0.5")]),
            Case::new("compact_rows", &[8, 4096], "f32", &[("density", "0.1")]),
            Case::new("sort_with_indices", &[1 << 17], "f32", &[]),
            Case::new("sort", &[64, 128], "i32", &[]),
            Case::new("argsort", &[4096], "f32", &[("descending", "true")]),
            Case::new("stable_partition", &[1 << 12], "f32", &[("density", "0.5")]),
            Case::new("split_by_bit", &[1 << 12], "i32", &[]),
            Case::new("topk_with_indices", &[1 << 14], "f32", &[("k", "10")]),
            Case::new("topk_with_indices", &[64, 128], "f32", &[("k", "8")]),
        ];
    }
    vec![
        Case::new("cumsum", &[1 << 20], "f32", &[("dim", "0")]),
        Case::new("cumsum", &[1 << 24], "f32", &[("dim", "0")]),
        Case::new("cumsum", &[1 << 28], "f32", &[("dim", "0")]),
        Case::new("cumsum", &[4096, 32768], "f32", &[("dim", "0")]),
        Case::new("cumsum", &[4096, 32768], "f32", &[("dim", "1")]),
        // The rest of the cumulative family on the same scan (stock Burn at 2^20 only).
        Case::new("cumprod", &[1 << 20], "f32", &[("dim", "0")]),
        Case::new("cumprod", &[1 << 24], "f32", &[("dim", "0")]),
        Case::new("cumprod", &[1 << 28], "f32", &[("dim", "0")]),
        Case::new("cumprod", &[4096, 32768], "f32", &[("dim", "1")]),
        Case::new("cummin", &[1 << 20], "f32", &[("dim", "0")]),
        Case::new("cummin", &[1 << 24], "f32", &[("dim", "0")]),
        Case::new("cummin", &[1 << 28], "f32", &[("dim", "0")]),
        Case::new("cummin", &[4096, 32768], "f32", &[("dim", "1")]),
        Case::new("cummax", &[1 << 20], "f32", &[("dim", "0")]),
        Case::new("cummax", &[1 << 24], "f32", &[("dim", "0")]),
        Case::new("cummax", &[1 << 28], "f32", &[("dim", "0")]),
        Case::new("cummax", &[4096, 32768], "f32", &[("dim", "1")]),
        Case::new("mask_select", &[1 << 24], "f32", &[("density", "0.5")]),
        Case::new("mask_select", &[1 << 24], "f32", &[("density", "0.01")]),
        Case::new("mask_select", &[1 << 28], "f32", &[("density", "0.5")]),
        Case::new("mask_select", &[1 << 28], "f32", &[("density", "0.01")]),
        Case::new("argwhere", &[1 << 24], "bool", &[("density", "0.5")]),
        Case::new("argwhere", &[1 << 28], "bool", &[("density", "0.5")]),
        Case::new("compact_rows", &[64, 1 << 20], "f32", &[("density", "0.1")]),
        Case::new("sort_with_indices", &[1 << 24], "f32", &[]),
        Case::new("sort_with_indices", &[1 << 28], "f32", &[]),
        Case::new("argsort", &[1 << 28], "f32", &[]),
        Case::new("sort", &[1 << 28], "i32", &[]),
        Case::new("sort_with_indices", &[4096, 32768], "f32", &[]),
        Case::new("sort_with_indices", &[16384, 128], "f32", &[]),
        Case::new(
            "sort_with_indices",
            &[64, 128256],
            "f32",
            &[("descending", "true")],
        ),
        Case::new("stable_partition", &[1 << 28], "f32", &[("density", "0.5")]),
        Case::new("split_by_bit", &[1 << 28], "i32", &[]),
        Case::new("topk_with_indices", &[1 << 24], "f32", &[("k", "10")]),
        Case::new("topk_with_indices", &[1 << 24], "f32", &[("k", "1000")]),
        Case::new("topk_with_indices", &[1 << 24], "f32", &[("k", "100000")]),
        Case::new("topk_with_indices", &[1 << 28], "f32", &[("k", "10")]),
        Case::new("topk_with_indices", &[1 << 28], "f32", &[("k", "1000")]),
        Case::new("topk_with_indices", &[1 << 28], "f32", &[("k", "100000")]),
        Case::new(
            "topk_with_indices",
            &[1 << 28],
            "f32",
            &[("k", "1000"), ("dist", "all_equal")],
        ),
        Case::new("topk_with_indices", &[4096, 32768], "f32", &[("k", "64")]),
        Case::new("topk_with_indices", &[16384, 128], "f32", &[("k", "8")]),
        Case::new("topk_with_indices", &[64, 128256], "f32", &[("k", "50")]),
    ]
}
