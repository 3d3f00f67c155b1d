rope
--head-dim
7
