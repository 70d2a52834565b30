for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
D=$PWD/.dev; xz -dc $D/libclspv.so.xz > $D/libclspv.so
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu OCL_ICD_VENDORS=$D/libvkcl.so VKCL_VALIDATION=0
tar -C $D -xJf $D/deps.tar.xz; cd $D/deps
timeout 40 ./images samplers packed --test-threads=4 > $OUT/images.txt 2>&1; echo "images $?"
timeout 20 ./byval_many > $OUT/byval.txt 2>&1; echo "byval $?"
timeout 20 ./il_programs > $OUT/il.txt 2>&1; echo "il $?"
timeout 60 ./svm --test-threads=1 > $OUT/svm.txt 2>&1; echo "svm $?"
timeout 30 ./threads --test-threads=1 > $OUT/threads.txt 2>&1; echo "threads $?"
cd $D; timeout 20 ./svm_triad 1024 > $OUT/triad.txt 2>&1; echo "triad $?"
clinfo 2>&1 | grep -iE "clock|SVM capab|Max memory alloc" > $OUT/clinfo.txt
grep -E "test result|FAILED|panicked" $OUT/*.txt | head -40
