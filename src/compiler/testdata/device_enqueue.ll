target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64-unknown-unknown"
%opencl.queue_t = type opaque
%struct.ndrange_t = type { i32, [3 x i64], [3 x i64], [3 x i64] }
%struct.__opencl_block_literal_generic = type { i32, i32, i8 addrspace(4)* }
define dso_local spir_kernel void @k(i32 addrspace(1)* noundef align 4 %o, %opencl.queue_t* %q) #0 !kernel_arg_addr_space !3 !kernel_arg_access_qual !4 !kernel_arg_type !5 !kernel_arg_base_type !5 !kernel_arg_type_qual !6 !kernel_arg_name !7 {
entry:
  %o.addr = alloca i32 addrspace(1)*, align 8
  %q.addr = alloca %opencl.queue_t*, align 8
  %tmp = alloca %struct.ndrange_t, align 8
  %block = alloca <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>, align 8
  store i32 addrspace(1)* %o, i32 addrspace(1)** %o.addr, align 8
  store %opencl.queue_t* %q, %opencl.queue_t** %q.addr, align 8
  %0 = load %opencl.queue_t*, %opencl.queue_t** %q.addr, align 8
  call spir_func void @_Z10ndrange_1Dm(%struct.ndrange_t* sret(%struct.ndrange_t) align 8 %tmp, i64 noundef 1) #4
  %block.size = getelementptr inbounds <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>, <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>* %block, i32 0, i32 0
  store i32 24, i32* %block.size, align 8
  %block.align = getelementptr inbounds <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>, <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>* %block, i32 0, i32 1
  store i32 8, i32* %block.align, align 4
  %block.invoke = getelementptr inbounds <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>, <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>* %block, i32 0, i32 2
  store i8 addrspace(4)* addrspacecast (i8* bitcast (void (i8 addrspace(4)*)* @__k_block_invoke to i8*) to i8 addrspace(4)*), i8 addrspace(4)** %block.invoke, align 8
  %block.captured = getelementptr inbounds <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>, <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>* %block, i32 0, i32 3
  %1 = load i32 addrspace(1)*, i32 addrspace(1)** %o.addr, align 8
  store i32 addrspace(1)* %1, i32 addrspace(1)** %block.captured, align 8
  %2 = bitcast <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>* %block to %struct.__opencl_block_literal_generic*
  %3 = addrspacecast %struct.__opencl_block_literal_generic* %2 to i8 addrspace(4)*
  %4 = call spir_func i32 @__enqueue_kernel_basic(%opencl.queue_t* %0, i32 0, %struct.ndrange_t* byval(%struct.ndrange_t) %tmp, i8 addrspace(4)* addrspacecast (i8* bitcast (void (i8 addrspace(4)*)* @__k_block_invoke_kernel to i8*) to i8 addrspace(4)*), i8 addrspace(4)* %3)
  ret void
}
declare spir_func void @_Z10ndrange_1Dm(%struct.ndrange_t* sret(%struct.ndrange_t) align 8, i64 noundef) #1
define internal spir_func void @__k_block_invoke(i8 addrspace(4)* noundef %.block_descriptor) #2 {
entry:
  %.block_descriptor.addr = alloca i8 addrspace(4)*, align 8
  %block.addr = alloca <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }> addrspace(4)*, align 8
  store i8 addrspace(4)* %.block_descriptor, i8 addrspace(4)** %.block_descriptor.addr, align 8
  %block = bitcast i8 addrspace(4)* %.block_descriptor to <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }> addrspace(4)*
  store <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }> addrspace(4)* %block, <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }> addrspace(4)** %block.addr, align 8
  %block.capture.addr = getelementptr inbounds <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }>, <{ i32, i32, i8 addrspace(4)*, i32 addrspace(1)* }> addrspace(4)* %block, i32 0, i32 3
  %0 = load i32 addrspace(1)*, i32 addrspace(1)* addrspace(4)* %block.capture.addr, align 8
  %arrayidx = getelementptr inbounds i32, i32 addrspace(1)* %0, i64 0
  store i32 1, i32 addrspace(1)* %arrayidx, align 4
  ret void
}
define spir_kernel void @__k_block_invoke_kernel(i8 addrspace(4)* %0) #3 {
entry:
  call spir_func void @__k_block_invoke(i8 addrspace(4)* %0)
  ret void
}
declare spir_func i32 @__enqueue_kernel_basic(%opencl.queue_t*, i32, %struct.ndrange_t*, i8 addrspace(4)*, i8 addrspace(4)*)
!3 = !{i32 1, i32 0}
!4 = !{!"none", !"none"}
!5 = !{!"int*", !"queue_t"}
!6 = !{!"", !""}
!7 = !{!"o", !"q"}
attributes #2 = { convergent noinline nounwind }
