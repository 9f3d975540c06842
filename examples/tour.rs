//! The sieve tour (`cargo run --release`): the exercises this project grew from, each run on
//! the device through the library, checked against a CPU reference, and printed.
//!
//! 1. Scan: the running count of a 0/1 flag array, and its total.
//!
//! (The filter, split and top-k exercises join as those primitives land.)

use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::{Rng, SeedableRng, rngs::StdRng};

fn main() {
    let Some(device) = device_or_advice() else {
        std::process::exit(2);
    };
    let client = sieve_burn::cube_client(&device).expect("a CubeCL device");
    let caps = sieve::DeviceCaps::of(&client);
    println!("sieve tour on {} ({})\n", caps.device_name, caps.runtime);

    let ok = running_count(&device);
    if ok {
        println!("\nall exercises match their CPU references");
    } else {
        println!("\nMISMATCH: see above");
        std::process::exit(1);
    }
}

/// Exercise 1: a running count of flags, the scan every compaction stands on: element i of
/// the inclusive count says how many flags up to i are set; the last one is the total.
fn running_count(device: &Device) -> bool {
    let n = 1_000_003; // odd, and past 65,535 (where stock Burn's cumsum broke on software Vulkan)
    let mut rng = StdRng::seed_from_u64(2026);
    let flags: Vec<i32> = (0..n).map(|_| i32::from(rng.random_bool(0.3))).collect();

    let tensor = Tensor::<1, Int>::from_data(TensorData::new(flags.clone(), [n]), device);
    let running = sieve_burn::cumsum(tensor, 0);
    let got: Vec<i64> = running.into_data().iter::<i64>().collect();

    let expected: Vec<i64> = flags
        .iter()
        .scan(0i64, |count, &f| {
            *count += f as i64;
            Some(*count)
        })
        .collect();
    let total = *got.last().unwrap();
    let ok = got == expected;

    println!("[1] scan: running count of {n} random 0/1 flags (30% set)");
    println!("    flags          {:?} ...", &flags[..12]);
    println!("    running count  {:?} ...", &got[..12]);
    println!(
        "    total          {total} (CPU: {}) {}",
        expected.last().unwrap(),
        verdict(ok)
    );
    ok
}

fn verdict(ok: bool) -> &'static str {
    if ok { "ok" } else { "MISMATCH" }
}

/// The default device, or advice (and `None`) when no GPU adapter can be opened.
fn device_or_advice() -> Option<Device> {
    let device = Device::default();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = std::panic::catch_unwind(|| sieve_burn::cube_client(&device).is_some());
    std::panic::set_hook(hook);
    match opened {
        Ok(true) => Some(device),
        _ => {
            eprintln!(
                "sieve: no GPU adapter could be opened.\n\
                 On a machine without a GPU, install a software Vulkan driver and run again:\n\
                 \n    sudo apt-get install mesa-vulkan-drivers\n"
            );
            None
        }
    }
}
