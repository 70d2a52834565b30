//! Probes how a Vulkan device could give SVM one address on host and device (issue 18):
//! prints, for each kind of memory, the device addresses the driver hands out and whether
//! the host can map the same virtual range there; whether an address can be requested
//! (bufferDeviceAddressCaptureReplay, with a host range reserved first); and whether
//! host-visible memory maps at its own device address (VK_EXT_map_memory_placed); and, for
//! two VkDevices of the GPU sharing memory through an opaque fd, whether the import gets the
//! exporter's device address (plainly, or asked for through capture-replay).
//!
//!     svm_probe [--device SUBSTRING]

use ash::vk;
use std::ffi::{c_void, CStr};

type Res<T> = Result<T, String>;

const SIZE: u64 = 64 << 20;
const PROT_NONE: i32 = 0;
const PROT_RW: i32 = 3;
const MAP_PRIVATE: i32 = 0x02;
const MAP_ANONYMOUS: i32 = 0x20;
const MAP_NORESERVE: i32 = 0x4000;
const MAP_FIXED_NOREPLACE: i32 = 0x100000;

extern "C" {
    fn mmap(addr: *mut c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64)
        -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> i32;
    fn __errno_location() -> *mut i32;
}

fn main() {
    if let Err(e) = run() {
        eprintln!("svm_probe: {e}");
        std::process::exit(1);
    }
}

fn vkr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

/// The /proc/self/maps lines that overlap [at, at + len).
fn maps_at(at: u64, len: u64) -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter(|l| {
            let range = l.split(' ').next().unwrap_or("");
            let Some((a, b)) = range.split_once('-') else {
                return false;
            };
            let (a, b) = (
                u64::from_str_radix(a, 16).unwrap_or(0),
                u64::from_str_radix(b, 16).unwrap_or(0),
            );
            a < at + len && at < b
        })
        .map(str::to_string)
        .collect()
}

/// Whether the host can map [at, at + len) without replacing anything (then unmapped again).
fn host_range_free(at: u64, len: u64) -> String {
    // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
    let p = unsafe {
        mmap(
            at as *mut c_void,
            len as usize,
            PROT_RW,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p as isize == -1 {
        // SAFETY: errno of this thread.
        let errno = unsafe { *__errno_location() };
        return format!(
            "host mmap there fails (errno {errno}); maps there: {:?}",
            maps_at(at, len)
        );
    }
    // SAFETY: mapped just above.
    unsafe { munmap(p, len as usize) };
    if p as u64 == at {
        "host range free (mmap at it works)".into()
    } else {
        format!("host mmap gave {p:?} instead (old kernel without NOREPLACE?)")
    }
}

struct Probe {
    instance: ash::Instance,
    pd: vk::PhysicalDevice,
    device: ash::Device,
    memory: vk::PhysicalDeviceMemoryProperties,
    capture_replay: bool,
    placed: Option<ash::khr::map_memory2::Device>,
}

impl Probe {
    fn new(want: Option<&str>) -> Res<Probe> {
        // SAFETY: loads the system's Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| e.to_string())?;
        // The loader stays for the whole run: the instance's calls go through it.
        let entry = Box::leak(Box::new(entry));
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: valid create info.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vkr("vkCreateInstance"))?;
        // SAFETY: valid instance.
        let pds = unsafe { instance.enumerate_physical_devices() }.map_err(vkr("enumerate"))?;
        for pd in pds {
            // SAFETY: pd comes from this instance.
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = props
                .device_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            if want.is_some_and(|w| !name.contains(w)) {
                continue;
            }
            println!("device: {name}");
            return Self::on(instance, pd);
        }
        Err("no device".into())
    }

    fn on(instance: ash::Instance, pd: vk::PhysicalDevice) -> Res<Probe> {
        // SAFETY: pd is valid.
        let exts = unsafe { instance.enumerate_device_extension_properties(pd) }
            .map_err(vkr("extensions"))?;
        let has = |n: &CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(n));
        let placed_ext = has(ash::ext::map_memory_placed::NAME) && has(ash::khr::map_memory2::NAME);
        println!(
            "VK_EXT_map_memory_placed {}, VK_KHR_map_memory2 {}, VK_EXT_external_memory_host {}",
            has(ash::ext::map_memory_placed::NAME),
            has(ash::khr::map_memory2::NAME),
            has(ash::ext::external_memory_host::NAME)
        );
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fplaced = vk::PhysicalDeviceMapMemoryPlacedFeaturesEXT::default();
        let mut f = vk::PhysicalDeviceFeatures2::default().push_next(&mut f12);
        if placed_ext {
            f = f.push_next(&mut fplaced);
        }
        // SAFETY: the chain is well-formed.
        unsafe { instance.get_physical_device_features2(pd, &mut f) };
        let capture_replay = f12.buffer_device_address_capture_replay != 0;
        let placed = placed_ext && fplaced.memory_map_placed != 0;
        println!(
            "bufferDeviceAddress {}, captureReplay {capture_replay}, memoryMapPlaced {placed}, \
             memoryMapRangePlaced {}, memoryUnmapReserve {}",
            f12.buffer_device_address != 0,
            fplaced.memory_map_range_placed != 0,
            fplaced.memory_unmap_reserve != 0
        );
        // SAFETY: pd is valid.
        let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
        let family = families
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or("no compute queue")? as u32;
        let prio = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let mut e12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .buffer_device_address_capture_replay(capture_replay);
        let mut eplaced = vk::PhysicalDeviceMapMemoryPlacedFeaturesEXT::default()
            .memory_map_placed(placed)
            .memory_unmap_reserve(placed && fplaced.memory_unmap_reserve != 0);
        let names = [
            ash::khr::map_memory2::NAME.as_ptr(),
            ash::ext::map_memory_placed::NAME.as_ptr(),
        ];
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut e12);
        if placed {
            info = info.enabled_extension_names(&names).push_next(&mut eplaced);
        }
        // SAFETY: valid create info.
        let device =
            unsafe { instance.create_device(pd, &info, None) }.map_err(vkr("vkCreateDevice"))?;
        // SAFETY: pd is valid.
        let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
        let placed = placed.then(|| ash::khr::map_memory2::Device::new(&instance, &device));
        Ok(Probe {
            instance,
            pd,
            device,
            memory,
            capture_replay,
            placed,
        })
    }

    fn type_with(
        &self,
        want: vk::MemoryPropertyFlags,
        not: vk::MemoryPropertyFlags,
    ) -> Option<u32> {
        (0..self.memory.memory_type_count).find(|&i| {
            let f = self.memory.memory_types[i as usize].property_flags;
            f.contains(want) && !f.intersects(not)
        })
    }

    /// A buffer of SIZE bytes on its own memory of `type_index` (with a requested address
    /// where `replay` is given): its device address.
    fn buffer(
        &self,
        type_index: u32,
        replay: Option<u64>,
    ) -> Res<(vk::Buffer, vk::DeviceMemory, u64)> {
        let mut flags = vk::BufferCreateFlags::empty();
        let mut alloc_flags = vk::MemoryAllocateFlags::DEVICE_ADDRESS;
        if replay.is_some() {
            flags |= vk::BufferCreateFlags::DEVICE_ADDRESS_CAPTURE_REPLAY;
            alloc_flags |= vk::MemoryAllocateFlags::DEVICE_ADDRESS_CAPTURE_REPLAY;
        }
        let mut bcap = vk::BufferOpaqueCaptureAddressCreateInfo::default()
            .opaque_capture_address(replay.unwrap_or(0));
        let mut binfo = vk::BufferCreateInfo::default()
            .size(SIZE)
            .flags(flags)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            );
        if replay.is_some() {
            binfo = binfo.push_next(&mut bcap);
        }
        // SAFETY: valid create info.
        let buffer =
            unsafe { self.device.create_buffer(&binfo, None) }.map_err(vkr("vkCreateBuffer"))?;
        let mut mflags = vk::MemoryAllocateFlagsInfo::default().flags(alloc_flags);
        let mut mcap = vk::MemoryOpaqueCaptureAddressAllocateInfo::default()
            .opaque_capture_address(replay.unwrap_or(0));
        let mut minfo = vk::MemoryAllocateInfo::default()
            .allocation_size(SIZE)
            .memory_type_index(type_index)
            .push_next(&mut mflags);
        if replay.is_some() {
            minfo = minfo.push_next(&mut mcap);
        }
        // SAFETY: valid allocate info.
        let memory = unsafe { self.device.allocate_memory(&minfo, None) }
            .map_err(vkr("vkAllocateMemory"))?;
        // SAFETY: both fresh; the buffer's requirements fit SIZE at offset 0.
        unsafe { self.device.bind_buffer_memory(buffer, memory, 0) }.map_err(vkr("bind"))?;
        let ainfo = vk::BufferDeviceAddressInfo::default().buffer(buffer);
        // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and bound memory.
        let address = unsafe { self.device.get_buffer_device_address(&ainfo) };
        Ok((buffer, memory, address))
    }

    fn free(&self, (buffer, memory, _): (vk::Buffer, vk::DeviceMemory, u64)) {
        // SAFETY: nothing uses them.
        unsafe {
            self.device.destroy_buffer(buffer, None);
            self.device.free_memory(memory, None);
        }
    }

    fn addresses(&self) {
        use vk::MemoryPropertyFlags as M;
        let kinds = [
            ("device-local", M::DEVICE_LOCAL, M::HOST_VISIBLE),
            (
                "device-local host-visible",
                M::DEVICE_LOCAL | M::HOST_VISIBLE,
                M::empty(),
            ),
            (
                "host-visible, not device-local",
                M::HOST_VISIBLE,
                M::DEVICE_LOCAL,
            ),
        ];
        for (kind, want, not) in kinds {
            let Some(t) = self.type_with(want, not) else {
                println!("{kind}: no such memory type");
                continue;
            };
            let mut held = Vec::new();
            for i in 0..3 {
                match self.buffer(t, None) {
                    Ok(b) => {
                        println!(
                            "{kind} (type {t}) #{i}: device address {:#x}; {}",
                            b.2,
                            host_range_free(b.2, SIZE)
                        );
                        held.push(b);
                    }
                    Err(e) => println!("{kind} #{i}: {e}"),
                }
            }
            held.into_iter().for_each(|b| self.free(b));
        }
    }

    /// A device-local buffer at an address the host reserved first.
    fn replay(&self) {
        use vk::MemoryPropertyFlags as M;
        let Some(t) = self
            .type_with(M::DEVICE_LOCAL, M::HOST_VISIBLE)
            .or(self.type_with(M::DEVICE_LOCAL, M::empty()))
        else {
            return;
        };
        let align = 2u64 << 20;
        // SAFETY: a fresh reservation, never accessed.
        let p = unsafe {
            mmap(
                std::ptr::null_mut(),
                (SIZE + align) as usize,
                PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                -1,
                0,
            )
        };
        let want = (p as u64 + align - 1) & !(align - 1);
        match self.buffer(t, Some(want)) {
            Ok(b) => {
                println!(
                    "capture replay at host reservation {want:#x}: device address {:#x} ({})",
                    b.2,
                    if b.2 == want { "SAME" } else { "different" }
                );
                self.free(b);
            }
            Err(e) => println!("capture replay at host reservation {want:#x}: {e}"),
        }
        // SAFETY: reserved above.
        unsafe { munmap(p, (SIZE + align) as usize) };
    }

    /// Host-visible memory mapped at its own device address.
    fn placed(&self) {
        let Some(m2) = &self.placed else {
            println!("placed maps: not supported");
            return;
        };
        use vk::MemoryPropertyFlags as M;
        for (kind, want, not) in [
            (
                "device-local host-visible",
                M::DEVICE_LOCAL | M::HOST_VISIBLE,
                M::empty(),
            ),
            (
                "host-visible, not device-local",
                M::HOST_VISIBLE,
                M::DEVICE_LOCAL,
            ),
        ] {
            let Some(t) = self.type_with(want, not) else {
                continue;
            };
            let b = match self.buffer(t, None) {
                Ok(b) => b,
                Err(e) => {
                    println!("placed {kind}: {e}");
                    continue;
                }
            };
            let mut place =
                vk::MemoryMapPlacedInfoEXT::default().placed_address(b.2 as *mut c_void);
            let info = vk::MemoryMapInfoKHR::default()
                .memory(b.1)
                .offset(0)
                .size(vk::WHOLE_SIZE)
                .flags(vk::MemoryMapFlags::PLACED_EXT)
                .push_next(&mut place);
            // SAFETY: the memory is host-visible and not mapped; the placed address is the
            // buffer's device address (the call replaces whatever the host had there).
            let mut ptr = std::ptr::null_mut();
            let r = unsafe { (m2.fp().map_memory2_khr)(self.device.handle(), &info, &mut ptr) }
                .result_with_success(ptr);
            match r {
                Ok(ptr) => {
                    // SAFETY: mapped just above, SIZE bytes.
                    unsafe { *(ptr as *mut u32) = 0x5a5a5a5a };
                    println!(
                        "placed {kind}: mapped at {ptr:?} for device address {:#x} ({})",
                        b.2,
                        if ptr as u64 == b.2 {
                            "SAME"
                        } else {
                            "different"
                        }
                    );
                }
                Err(e) => println!("placed {kind} at {:#x}: {e:?}", b.2),
            }
            self.free(b);
        }
    }
}

/// Two VkDevices of one physical device sharing device-local memory (an opaque fd, as vkcl's
/// multi-device contexts on one GPU do): does the import get the exporter's device address,
/// and can capture-replay ask for it? (One SVM pointer for both devices of such a context.)
fn two_devices(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Res<()> {
    let exts =
        unsafe { instance.enumerate_device_extension_properties(pd) }.map_err(vkr("extensions"))?;
    if !exts
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(ash::khr::external_memory_fd::NAME))
    {
        println!("two devices: no VK_KHR_external_memory_fd");
        return Ok(());
    }
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f = vk::PhysicalDeviceFeatures2::default().push_next(&mut f12);
    // SAFETY: the chain is well-formed.
    unsafe { instance.get_physical_device_features2(pd, &mut f) };
    let replay = f12.buffer_device_address_capture_replay != 0;
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    let family = families
        .iter()
        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .ok_or("no compute queue")? as u32;
    // A VkDevice with external-memory fds (and, if `capture`, capture-replay addresses).
    let make = |capture: bool| -> Res<(ash::Device, ash::khr::external_memory_fd::Device)> {
        let prio = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let mut e12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .buffer_device_address_capture_replay(capture);
        let names = [ash::khr::external_memory_fd::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut e12);
        // SAFETY: valid create info.
        let d =
            unsafe { instance.create_device(pd, &info, None) }.map_err(vkr("vkCreateDevice"))?;
        let fd = ash::khr::external_memory_fd::Device::new(instance, &d);
        Ok((d, fd))
    };
    let (a, fd_a) = make(false)?;
    let (b, _) = make(false)?;
    // SAFETY: pd is valid.
    let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
    // The first device-local memory type among `bits`.
    let local = |bits: u32| {
        (0..memory.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && memory.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .ok_or("no device-local memory for the buffer")
    };
    let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
    // A buffer on `d` bound to memory from `import` (an fd) or new exportable memory, with a
    // requested opaque capture address where given: (buffer, memory, device address).
    // (`replayable`: with the capture-replay flags.)
    let buffer = |d: &ash::Device,
                  import: Option<i32>,
                  at: Option<(u64, u64)>,
                  replayable: bool|
     -> Res<(vk::Buffer, vk::DeviceMemory, u64)> {
        let mut ext = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
        let mut bcap = vk::BufferOpaqueCaptureAddressCreateInfo::default()
            .opaque_capture_address(at.map_or(0, |a| a.0));
        let mut binfo = vk::BufferCreateInfo::default()
            .size(SIZE)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            )
            .push_next(&mut ext);
        let mut mflags = vk::MemoryAllocateFlags::DEVICE_ADDRESS;
        if replayable {
            binfo = binfo.flags(vk::BufferCreateFlags::DEVICE_ADDRESS_CAPTURE_REPLAY);
            mflags |= vk::MemoryAllocateFlags::DEVICE_ADDRESS_CAPTURE_REPLAY;
        }
        if at.is_some() {
            binfo = binfo.push_next(&mut bcap);
        }
        // SAFETY: valid create info.
        let buf = unsafe { d.create_buffer(&binfo, None) }.map_err(vkr("vkCreateBuffer"))?;
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(mflags);
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(handle);
        let mut imp = vk::ImportMemoryFdInfoKHR::default()
            .handle_type(handle)
            .fd(import.unwrap_or(-1));
        let mut mcap = vk::MemoryOpaqueCaptureAddressAllocateInfo::default()
            .opaque_capture_address(at.map_or(0, |a| a.1));
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buf);
        // SAFETY: buf was just created.
        let req = unsafe { d.get_buffer_memory_requirements(buf) };
        let mut minfo = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(local(req.memory_type_bits)?)
            .push_next(&mut flags)
            .push_next(&mut dedicated);
        minfo = match import {
            Some(_) => minfo.push_next(&mut imp),
            None => minfo.push_next(&mut export),
        };
        if at.is_some() {
            minfo = minfo.push_next(&mut mcap);
        }
        // SAFETY: valid allocate info.
        let mem = unsafe { d.allocate_memory(&minfo, None) }.map_err(|e| {
            format!(
                "vkAllocateMemory ({} bytes, type {:?}, import {import:?}, replayable {replayable}): {e}",
                req.size,
                local(req.memory_type_bits)
            )
        })?;
        // SAFETY: both fresh.
        unsafe { d.bind_buffer_memory(buf, mem, 0) }.map_err(vkr("bind"))?;
        let ainfo = vk::BufferDeviceAddressInfo::default().buffer(buf);
        // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and bound memory.
        Ok((buf, mem, unsafe { d.get_buffer_device_address(&ainfo) }))
    };
    let export_fd = |fd: &ash::khr::external_memory_fd::Device, mem: vk::DeviceMemory| {
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(mem)
            .handle_type(handle);
        // SAFETY: exportable memory of the device `fd` was loaded for.
        unsafe { fd.get_memory_fd(&info) }.map_err(vkr("vkGetMemoryFdKHR"))
    };
    let (_, mem_a, addr_a) = buffer(&a, None, None, false)?;
    let plain = buffer(&b, Some(export_fd(&fd_a, mem_a)?), None, false);
    match &plain {
        Ok((_, _, addr_b)) => println!(
            "two devices: exported at {addr_a:#x}, imported at {addr_b:#x} ({})",
            if *addr_b == addr_a {
                "SAME"
            } else {
                "different"
            }
        ),
        Err(e) => println!("two devices: import failed: {e}"),
    }
    if replay {
        let (a, fd_a) = make(true)?;
        let (b, _) = make(true)?;
        let (buf_c, mem_c, addr_c) = match buffer(&a, None, None, true) {
            Ok(b) => b,
            Err(e) => {
                println!("two devices: exportable memory with capture-replay: {e}");
                return Ok(());
            }
        };
        let minfo = vk::DeviceMemoryOpaqueCaptureAddressInfo::default().memory(mem_c);
        // SAFETY: memory allocated with the capture-replay flag.
        let at = unsafe { a.get_device_memory_opaque_capture_address(&minfo) };
        let binfo = vk::BufferDeviceAddressInfo::default().buffer(buf_c);
        // SAFETY: a buffer created with the capture-replay flag.
        let buffer_at = unsafe { a.get_buffer_opaque_capture_address(&binfo) };
        match buffer(&b, Some(export_fd(&fd_a, mem_c)?), Some((buffer_at, at)), true) {
            Ok((_, _, addr_d)) => println!(
                "two devices, capture-replay import: exported at {addr_c:#x} (capture {at:#x}), imported at {addr_d:#x} ({})",
                if addr_d == addr_c { "SAME" } else { "different" }
            ),
            Err(e) => println!("two devices, capture-replay import: {e}"),
        }
    }
    // The devices go with the process (this is a probe).
    Ok(())
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let want = args
        .iter()
        .position(|a| a == "--device")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let probe = Probe::new(want)?;
    // First, before the other probes allocate anything.
    two_devices(&probe.instance, probe.pd)?;
    let _ = (&probe.instance, probe.pd, probe.capture_replay);
    probe.addresses();
    if probe.capture_replay {
        probe.replay();
    }
    probe.placed();
    Ok(())
}
