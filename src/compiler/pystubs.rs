//! Stub definitions of the CPython C-API symbols that the pyclspv shared object leaves undefined.
//!
//! The clspv build vkcl loads comes from a Python wheel, so its shared object references 105
//! CPython names (functions and data). The compiler path never touches them, but the dynamic
//! loader must resolve every one before `dlopen(RTLD_NOW)` succeeds. The `vkcl-clspv` helper
//! therefore defines each name itself and exports it dynamically (see build.rs), which works with
//! no libpython on the machine. The list is `nm -D --undefined-only libclspv.so | grep ' _\?Py'`
//! for pyclspv 0.0.1; a clspv built without Python needs none of them.
//!
//! The definitions live in a macro expanded in the helper binary only: defined in the library
//! they would also be exported by the ICD's cdylib into every OpenCL application.

/// Defines every stub as an exported function that aborts if it is ever called (or, for a data
/// symbol, never read: clspv's compile path does not reach its Python bindings).
#[macro_export]
macro_rules! define_python_stubs {
    () => {
        $crate::define_python_stubs!(@each
            PyBaseObject_Type PyByteArray_AsString PyByteArray_Size PyByteArray_Type PyBytes_AsString
            PyBytes_AsStringAndSize PyBytes_FromStringAndSize PyBytes_Size PyCFunction_Type
            PyCMethod_New PyCapsule_GetPointer PyCapsule_New PyDict_Contains PyDict_Copy
            PyDict_DelItemString PyDict_GetItemWithError PyDict_New PyDict_Next PyDict_Size PyDict_Type
            PyErr_Clear PyErr_Fetch PyErr_Format PyErr_NormalizeException PyErr_Occurred PyErr_Restore
            PyErr_SetObject PyErr_SetString PyEval_AcquireThread PyEval_GetBuiltins PyEval_SaveThread
            PyExc_ImportError PyExc_IndexError PyExc_MemoryError PyExc_OverflowError PyExc_RuntimeError
            PyExc_SystemError PyExc_TypeError PyExc_ValueError PyException_SetCause
            PyException_SetContext PyException_SetTraceback PyFrame_GetBack PyFrame_GetCode
            PyFrame_GetLineNumber PyGILState_Ensure PyGILState_GetThisThreadState PyGILState_Release
            PyInstanceMethod_New PyInstanceMethod_Type PyInterpreterState_Get
            PyInterpreterState_GetDict PyList_Size PyMem_Calloc PyMem_Free PyModuleDef_Init
            PyModule_AddObject PyModule_NewObject PyModule_Type PyNumber_Add
            PyObject_CallFunctionObjArgs PyObject_CallObject PyObject_ClearWeakRefs PyObject_GC_UnTrack
            PyObject_GetAttrString PyObject_GetItem PyObject_HasAttrString PyObject_IsInstance
            PyObject_Repr PyObject_SetAttrString PyObject_SetItem PyObject_Str PyProperty_Type
            PyThreadState_Clear PyThreadState_DeleteCurrent PyThreadState_Get PyThreadState_New
            PyThread_tss_create PyThread_tss_delete PyThread_tss_get PyThread_tss_set PyTuple_GetItem
            PyTuple_New PyTuple_SetItem PyTuple_Size PyType_FromSpec PyType_IsSubtype PyType_Ready
            PyType_Type PyUnicode_AsEncodedString PyUnicode_AsUTF8AndSize PyUnicode_AsUTF8String
            PyUnicode_DecodeUTF8 PyUnicode_FromString PyWeakref_NewRef Py_GetVersion
            _PyObject_GetDictPtr _PyObject_New _PyThreadState_UncheckedGet _PyType_Lookup _Py_Dealloc
            _Py_FalseStruct _Py_NoneStruct _Py_NotImplementedStruct _Py_TrueStruct
        );
    };
    (@each $($name:ident)*) => {
        $(
            #[no_mangle]
            #[allow(non_snake_case)]
            pub extern "C" fn $name() {
                ::std::process::abort()
            }
        )*
    };
}
