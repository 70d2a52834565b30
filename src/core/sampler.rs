//! Samplers (section 5.13 of the spec): how kernels read images. The Vulkan sampler is the
//! device's, one per sampler bitmask (vk::image).

use super::context::Context;
use super::error::{check, CLResult};
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use crate::vk::image::{SAMPLER_FILTER_LINEAR, SAMPLER_FILTER_NEAREST, SAMPLER_NORMALIZED};
use std::sync::Arc;

#[repr(C)]
pub struct Sampler {
    pub base: Base,
    pub context: Arc<Context>,
    pub normalized: bool,
    pub addressing: cl_addressing_mode,
    pub filter: cl_filter_mode,
    /// CL_SAMPLER_PROPERTIES as given (empty for clCreateSampler).
    pub properties: Vec<cl_sampler_properties>,
}

impl ClObject for Sampler {
    const KIND: Kind = Kind::Sampler;
    const INVALID: i32 = CL_INVALID_SAMPLER;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Sampler {
    /// CL_INVALID_VALUE for an unknown addressing or filter mode.
    pub fn new(
        context: &Arc<Context>,
        normalized: bool,
        addressing: cl_addressing_mode,
        filter: cl_filter_mode,
        properties: Vec<cl_sampler_properties>,
    ) -> CLResult<Arc<Sampler>> {
        check(
            (CL_ADDRESS_NONE..=CL_ADDRESS_MIRRORED_REPEAT).contains(&addressing),
            CL_INVALID_VALUE,
        )?;
        check(
            filter == CL_FILTER_NEAREST || filter == CL_FILTER_LINEAR,
            CL_INVALID_VALUE,
        )?;
        Ok(Arc::new(Sampler {
            base: Base::new(Kind::Sampler),
            context: context.clone(),
            normalized,
            addressing,
            filter,
            properties,
        }))
    }

    /// The OpenCL C sampler bitmask of this sampler (CLK_ADDRESS_* are 0, 2, 4, 6, 8 in the
    /// order of the CL_ADDRESS_* values).
    pub fn mask(&self) -> u32 {
        let address = (self.addressing - CL_ADDRESS_NONE) * 2;
        let filter = if self.filter == CL_FILTER_LINEAR {
            SAMPLER_FILTER_LINEAR
        } else {
            SAMPLER_FILTER_NEAREST
        };
        address
            | filter
            | if self.normalized {
                SAMPLER_NORMALIZED
            } else {
                0
            }
    }
}
