//! Contexts: a set of devices (their logical devices opened) and the error callback.

use super::device::Device;
use super::device_enqueue::DeviceQueue;
use super::error::CLResult;
use super::object::{Base, ClObject, Kind};
use crate::cl::*;
use parking_lot::Mutex;
use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Weak};

pub type ErrorCallback = unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void);
/// A clSetContextDestructorCallback callback, given the context's handle.
pub type Destructor = Box<dyn FnOnce(*mut c_void) + Send>;

#[repr(C)]
pub struct Context {
    pub base: Base,
    pub devices: Vec<Arc<Device>>,
    /// The properties as given, with the terminating 0 (empty if none were given).
    pub properties: Vec<cl_context_properties>,
    notify: Option<(ErrorCallback, usize)>,
    destructors: Mutex<Vec<Destructor>>,
    /// Each device's default device queue (CL_QUEUE_ON_DEVICE_DEFAULT,
    /// clSetDefaultDeviceCommandQueue), while the application holds it.
    default_device_queues: Mutex<Vec<(Arc<Device>, Weak<DeviceQueue>)>>,
}

impl Drop for Context {
    /// clSetContextDestructorCallback callbacks, in reverse order of registration. The list
    /// is taken without its lock (`get_mut`): a `lock()` in the loop's head would hold the
    /// guard, a temporary of the `for` expression, while every callback runs.
    fn drop(&mut self) {
        let handle = self as *mut Context as *mut c_void;
        let destructors = std::mem::take(self.destructors.get_mut());
        for f in destructors.into_iter().rev() {
            f(handle);
        }
    }
}

impl ClObject for Context {
    const KIND: Kind = Kind::Context;
    const INVALID: i32 = CL_INVALID_CONTEXT;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Context {
    pub fn new(
        devices: Vec<Arc<Device>>,
        properties: Vec<cl_context_properties>,
        notify: Option<(ErrorCallback, *mut c_void)>,
    ) -> CLResult<Arc<Context>> {
        for d in &devices {
            d.vk()?;
        }
        Ok(Arc::new(Context {
            base: Base::new(Kind::Context),
            devices,
            properties,
            notify: notify.map(|(f, u)| (f, u as usize)),
            destructors: Mutex::new(vec![]),
            default_device_queues: Mutex::new(vec![]),
        }))
    }

    /// The default device queue of `device`, if there is one.
    pub fn default_device_queue(&self, device: &Arc<Device>) -> Option<Arc<DeviceQueue>> {
        let queues = self.default_device_queues.lock();
        let (_, q) = queues.iter().find(|(d, _)| Arc::ptr_eq(d, device))?;
        q.upgrade()
    }

    /// Makes `queue` its device's default device queue.
    pub fn set_default_device_queue(&self, queue: &Arc<DeviceQueue>) {
        let mut queues = self.default_device_queues.lock();
        queues.retain(|(d, _)| !Arc::ptr_eq(d, &queue.device));
        queues.push((queue.device.clone(), Arc::downgrade(queue)));
    }

    pub fn has_device(&self, dev: &Arc<Device>) -> bool {
        self.devices.iter().any(|d| Arc::ptr_eq(d, dev))
    }

    pub fn on_destroy(&self, f: Destructor) {
        self.destructors.lock().push(f);
    }

    /// Reports an error to the application's callback, if it gave one.
    pub fn report(&self, message: &str) {
        log::warn!(target: "api", "context error: {message}");
        if let Some((f, user)) = self.notify {
            let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
            // SAFETY: the application registered this callback with this user data; the
            // message outlives the call.
            unsafe { f(msg.as_ptr(), std::ptr::null(), 0, user as *mut c_void) };
        }
    }
}
