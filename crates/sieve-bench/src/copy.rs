//! The bandwidth ceiling of a run: a vectorised device-to-device copy kernel (CubeCL, four
//! f32 per load), timed like every other row. Bytes moved: read n + write n. Params (issue
//! 16's launch-shape probe): `per_unit` vectors each unit copies, a grid's width apart
//! (default 1), and `units` per cube (default 256). `read=1`: each call also reads the
//! output's first 16 bytes back to the host, as a Burn op that reads a count does: the
//! row's time over the plain copy row's is one small read's round trip on this runtime
//! (issue 16: the count read costs more through cubecl-wgpu than through CUDA).

use cubecl::prelude::*;

use crate::case::Case;
use crate::report::Row;
use crate::timing::Bench;

#[cube(launch_unchecked)]
fn copy_kernel(
    input: &[Vector<f32, Const<4>>],
    output: &mut [Vector<f32, Const<4>>],
    vectors: usize,
    per_unit: usize,
) {
    let unit = (CUBE_POS_Y as usize * CUBE_COUNT_X as usize + CUBE_POS_X as usize)
        * CUBE_DIM as usize
        + UNIT_POS as usize;
    // Consecutive units read consecutive vectors on every step, so each step is coalesced.
    let stride = vectors.div_ceil(per_unit);
    for step in 0..per_unit {
        let index = step * stride + unit;
        if unit < stride && index < vectors {
            output[index] = input[index];
        }
    }
}

pub fn time_copy(bench: &Bench<'_>, case: &Case) -> Row {
    let client = bench.client;
    let len = case.numel().div_ceil(4) * 4;
    let vectors = len / 4;
    let per_unit = case.param_or("per_unit", 1usize).max(1);
    let data: Vec<f32> = (0..len).map(|i| (i % 1021) as f32 + 1.0).collect();
    let input = client.create_from_slice(bytemuck::cast_slice::<f32, u8>(&data));
    let output = client.empty(len * 4);
    let units: u32 = case.param_or("units", 256);
    let cubes = vectors.div_ceil(per_unit).div_ceil(units as usize);
    let launch = || unsafe {
        copy_kernel::launch_unchecked(
            client,
            sieve::common::grid::cube_count_1d(client, cubes),
            CubeDim::new_1d(units),
            BufferArg::from_raw_parts(input.clone(), len),
            BufferArg::from_raw_parts(output.clone(), len),
            vectors,
            per_unit,
        )
    };
    let row = bench.row(case, "copy", 8 * len as u64, &[]);
    launch();
    let bytes = client.read_one(output.clone()).expect("read back the copy");
    if bytes[..len * 4] != *bytemuck::cast_slice::<f32, u8>(&data) {
        return row.untimed("wrong", "copy kernel output differs from its input".into());
    }
    // (`len` is a positive multiple of 4 whenever there is anything to copy.)
    let read_back = case.param_or("read", 0u32) == 1 && len >= 4;
    let head = output
        .clone()
        .offset_end((4 * len as u64).saturating_sub(16));
    let stats = bench.time_raw(|| {
        launch();
        if read_back {
            let bytes = client
                .read_one(head.clone())
                .expect("read back the copy's head");
            assert_eq!(bytes.len(), 16, "the copy's head is 16 bytes");
        }
    });
    row.timed(stats)
}
