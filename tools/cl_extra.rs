// cl_khr_command_buffer 0.9.8 and cl_khr_command_buffer_mutable_dispatch 0.9.5 (OpenCL-Headers'
// cl_ext.h), kept by hand in tools/cl_extra.rs: tools/gen_cl.py appends this file to src/cl.rs.
pub type cl_command_buffer_khr = *mut std::ffi::c_void;
pub type cl_mutable_command_khr = *mut std::ffi::c_void;
pub type cl_sync_point_khr = cl_uint;
pub type cl_command_buffer_info_khr = cl_uint;
pub type cl_command_buffer_state_khr = cl_uint;
pub type cl_command_buffer_properties_khr = cl_properties;
pub type cl_command_buffer_flags_khr = cl_bitfield;
pub type cl_command_properties_khr = cl_properties;
pub const CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR: cl_uint = 0x12A9;
pub const CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR: cl_uint = 0x129A;
pub const CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR: cl_uint = 0x12AA;
pub const CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR: cl_bitfield = 1 << 0;
pub const CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR: cl_bitfield = 1 << 1;
pub const CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR: cl_bitfield = 1 << 2;
pub const CL_COMMAND_BUFFER_FLAGS_KHR: cl_properties = 0x1293;
pub const CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR: cl_bitfield = 1 << 0;
pub const CL_INVALID_COMMAND_BUFFER_KHR: cl_int = -1138;
pub const CL_INVALID_SYNC_POINT_WAIT_LIST_KHR: cl_int = -1139;
pub const CL_INCOMPATIBLE_COMMAND_QUEUE_KHR: cl_int = -1140;
pub const CL_COMMAND_BUFFER_QUEUES_KHR: cl_uint = 0x1294;
pub const CL_COMMAND_BUFFER_NUM_QUEUES_KHR: cl_uint = 0x1295;
pub const CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR: cl_uint = 0x1296;
pub const CL_COMMAND_BUFFER_STATE_KHR: cl_uint = 0x1297;
pub const CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR: cl_uint = 0x1298;
pub const CL_COMMAND_BUFFER_CONTEXT_KHR: cl_uint = 0x1299;
pub const CL_COMMAND_BUFFER_STATE_RECORDING_KHR: cl_uint = 0;
pub const CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR: cl_uint = 1;
pub const CL_COMMAND_BUFFER_STATE_FINALIZED_KHR: cl_uint = 2;
pub const CL_COMMAND_COMMAND_BUFFER_KHR: cl_uint = 0x12A8;
pub type cl_command_buffer_update_type_khr = cl_uint;
pub type cl_mutable_dispatch_fields_khr = cl_bitfield;
pub type cl_mutable_command_info_khr = cl_uint;
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cl_mutable_dispatch_arg_khr {
    pub arg_index: cl_uint,
    pub arg_size: usize,
    pub arg_value: *const std::ffi::c_void,
}
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cl_mutable_dispatch_exec_info_khr {
    pub param_name: cl_uint,
    pub param_value_size: usize,
    pub param_value: *const std::ffi::c_void,
}
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cl_mutable_dispatch_config_khr {
    pub command: cl_mutable_command_khr,
    pub num_args: cl_uint,
    pub num_svm_args: cl_uint,
    pub num_exec_infos: cl_uint,
    pub work_dim: cl_uint,
    pub arg_list: *const cl_mutable_dispatch_arg_khr,
    pub arg_svm_list: *const cl_mutable_dispatch_arg_khr,
    pub exec_info_list: *const cl_mutable_dispatch_exec_info_khr,
    pub global_work_offset: *const usize,
    pub global_work_size: *const usize,
    pub local_work_size: *const usize,
}
pub const CL_COMMAND_BUFFER_MUTABLE_KHR: cl_bitfield = 1 << 1;
pub const CL_INVALID_MUTABLE_COMMAND_KHR: cl_int = -1141;
pub const CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR: cl_uint = 0x12B0;
pub const CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR: cl_properties = 0x12B1;
pub const CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR: cl_bitfield = 1 << 0;
pub const CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR: cl_bitfield = 1 << 1;
pub const CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR: cl_bitfield = 1 << 2;
pub const CL_MUTABLE_DISPATCH_ARGUMENTS_KHR: cl_bitfield = 1 << 3;
pub const CL_MUTABLE_DISPATCH_EXEC_INFO_KHR: cl_bitfield = 1 << 4;
pub const CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR: cl_uint = 0x12A0;
pub const CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR: cl_uint = 0x12A1;
pub const CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR: cl_uint = 0x12AD;
pub const CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR: cl_uint = 0x12A2;
pub const CL_MUTABLE_DISPATCH_KERNEL_KHR: cl_uint = 0x12A3;
pub const CL_MUTABLE_DISPATCH_DIMENSIONS_KHR: cl_uint = 0x12A4;
pub const CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR: cl_uint = 0x12A5;
pub const CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR: cl_uint = 0x12A6;
pub const CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR: cl_uint = 0x12A7;
pub const CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR: cl_uint = 0;
pub const CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR: cl_properties = 0x12B7;
pub const CL_MUTABLE_DISPATCH_ASSERTS_KHR: cl_properties = 0x12B8;
pub const CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR: cl_bitfield = 1 << 0;
