rope
--head-dim
8
--q
@DATA@/rope_q8.npy
