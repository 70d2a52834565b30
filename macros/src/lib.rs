//! `#[entry(clName)]`: turns an ordinary Rust function into an OpenCL entry point.
//!
//! ```ignore
//! #[entry(clCreateBuffer)]
//! unsafe fn create_buffer(context: cl_context, ...) -> CLResult<cl_mem> { ... }
//! ```
//!
//! keeps `create_buffer` as it is (callable from Rust, formatted by rustfmt) and adds
//! `#[no_mangle] pub unsafe extern "C" fn clCreateBuffer(...)`, which runs it through
//! `crate::api::util::run_int` (a function returning `CLResult<()>` becomes one returning
//! `cl_int`) or `crate::api::util::run_obj` (one returning `CLResult<T>` becomes one returning
//! `T` with an `errcode_ret` parameter appended; so does one returning
//! `CLResult<(T, CLResult<()>)>`: an object returned together with the result of the work it
//! began, clLinkProgram's program whose link failed). Those catch panics, write the error code and
//! log the call. `#[entry(clReleaseX, at_exit)]` marks an entry point that still runs after
//! vkcl's exit handler (releases, retains and queries of known state, which do no GPU work
//! then); every other one returns CL_OUT_OF_RESOURCES at that point.

use proc_macro::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{
    parse_macro_input, FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType,
    Token, Type,
};

#[proc_macro_attribute]
pub fn entry(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(attr with Punctuated::<Ident, Token![,]>::parse_terminated);
    let mut func = parse_macro_input!(item as ItemFn);
    let mut names = args.iter();
    let Some(c_name) = names.next() else {
        return syn::Error::new(proc_macro2::Span::call_site(), "#[entry(clName)]")
            .to_compile_error()
            .into();
    };
    let at_exit = match names.next() {
        None => false,
        Some(i) if i == "at_exit" => true,
        Some(i) => {
            return syn::Error::new_spanned(i, "expected `at_exit`")
                .to_compile_error()
                .into()
        }
    };
    match expand(c_name, at_exit, &mut func) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `T` of a `CLResult<T>` return type, or of `CLResult<(T, CLResult<()>)>` (an object
/// returned with an error too).
fn result_value(ret: &ReturnType) -> Option<&Type> {
    let ReturnType::Type(_, ty) = ret else {
        return None;
    };
    let value = cl_result(ty)?;
    match value {
        Type::Tuple(t) if t.elems.len() == 2 && cl_result(&t.elems[1]).is_some() => t.elems.first(),
        _ => Some(value),
    }
}

/// `T` of `CLResult<T>`.
fn cl_result(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "CLResult" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

fn expand(
    c_name: &Ident,
    at_exit: bool,
    func: &mut ItemFn,
) -> syn::Result<proc_macro2::TokenStream> {
    let sig = &func.sig;
    let rust_name = &sig.ident;
    let value = result_value(&sig.output).ok_or_else(|| {
        syn::Error::new_spanned(
            &sig.output,
            "an entry point returns CLResult<T> or CLResult<(T, CLResult<()>)>",
        )
    })?;
    let mut params = vec![];
    let mut args = vec![];
    for input in &sig.inputs {
        let FnArg::Typed(pt) = input else {
            return Err(syn::Error::new_spanned(
                input,
                "an entry point takes no self",
            ));
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err(syn::Error::new_spanned(
                &pt.pat,
                "parameters are plain names",
            ));
        };
        let (name, ty) = (&pi.ident, &pt.ty);
        params.push(quote! { #name: #ty });
        args.push(quote! { #name });
    }
    let call = if matches!(sig.safety, syn::Safety::Unsafe(_)) {
        quote! {
            // SAFETY: the application's arguments, under the contract the OpenCL
            // specification gives them, which is `#rust_name`'s contract.
            unsafe { #rust_name(#(#args),*) }
        }
    } else {
        quote! { #rust_name(#(#args),*) }
    };
    let c_str = c_name.to_string();
    let is_unit = matches!(value, Type::Tuple(t) if t.elems.is_empty());
    let doc = format!(" `{c_str}`: [`{rust_name}`] behind the C ABI.");
    let wrapper = if is_unit {
        quote! {
            #[doc = #doc]
            ///
            /// # Safety
            /// The arguments follow the OpenCL specification's contract for this function.
            #[no_mangle]
            #[allow(non_snake_case, clippy::too_many_arguments)]
            pub unsafe extern "C" fn #c_name(#(#params),*) -> crate::cl::cl_int {
                crate::api::util::run_int(#c_str, #at_exit, || #call)
            }
        }
    } else {
        quote! {
            #[doc = #doc]
            ///
            /// # Safety
            /// The arguments follow the OpenCL specification's contract for this function;
            /// `errcode_ret` is NULL or points to a `cl_int`.
            #[no_mangle]
            #[allow(non_snake_case, clippy::too_many_arguments)]
            pub unsafe extern "C" fn #c_name(
                #(#params,)*
                errcode_ret: *mut crate::cl::cl_int,
            ) -> #value {
                // SAFETY: errcode_ret is NULL or points to a cl_int, as the spec requires.
                unsafe { crate::api::util::run_obj(#c_str, #at_exit, errcode_ret, || #call) }
            }
        }
    };
    func.attrs
        .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    Ok(quote! {
        #func
        #wrapper
    })
}
