rope
--head-dim
8
--ctx
256
