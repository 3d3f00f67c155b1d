simulate
--heads
2
--logits
@DATA@/no_such_file.npy
