//! Cube counts for grids of many cubes.
//!
//! Some runtimes cap each grid dimension at 65,535 cubes (software Vulkan does), so a
//! one-dimensional grid of `n` cubes is laid out as `x * y` with `x <= 65,535`; kernels
//! recover the linear cube index with [`linear_cube_index()`] and skip the surplus cubes of
//! the last row of the grid.

use cubecl::prelude::*;

/// The largest cube count any runtime accepts per dimension.
pub const MAX_CUBES_PER_DIM: u32 = 65_535;

/// A grid of at least `cubes` cubes, none of its dimensions over the device's limit.
pub fn cube_count_1d(client: &Client, cubes: usize) -> CubeCount {
    let (max_x, max_y, _) = client.properties().hardware.max_cube_count;
    let max_x = max_x.clamp(1, MAX_CUBES_PER_DIM) as usize;
    let max_y = max_y.clamp(1, MAX_CUBES_PER_DIM) as usize;
    let cubes = cubes.max(1);
    let x = cubes.min(max_x);
    let y = cubes.div_ceil(x);
    assert!(
        y <= max_y,
        "grid of {cubes} cubes exceeds the device limit of {max_x} x {max_y}"
    );
    CubeCount::Static(x as u32, y as u32, 1)
}

/// The grid and cube of a launch with one unit per element of `elements` (256 units a cube,
/// or the device's most): the index is [`linear_unit_index()`], and units at or past
/// `elements` must return.
pub fn one_unit_per_element(client: &Client, elements: usize) -> (CubeCount, CubeDim) {
    elements_per_unit(client, elements, 1)
}

/// As [`one_unit_per_element`], each unit given `per_unit` elements: a cube covers
/// `per_unit * CUBE_DIM` consecutive elements.
pub fn elements_per_unit(client: &Client, elements: usize, per_unit: u32) -> (CubeCount, CubeDim) {
    let units = 256u32
        .min(client.properties().hardware.max_units_per_cube)
        .max(1);
    (
        cube_count_1d(client, elements.div_ceil((units * per_unit) as usize)),
        CubeDim::new_1d(units),
    )
}

/// The linear index of this cube in a grid made by [`cube_count_1d`].
#[cube]
pub fn linear_cube_index() -> usize {
    CUBE_POS_Y as usize * CUBE_COUNT_X as usize + CUBE_POS_X as usize
}

/// The linear index of this unit in a one-dimensional launch over a grid made by
/// [`cube_count_1d`] (one unit per element: [`one_unit_per_element`]). The last cube's
/// surplus units get indices past the elements; the kernel bounds them.
#[cube]
pub fn linear_unit_index() -> usize {
    linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize
}
