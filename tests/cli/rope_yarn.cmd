rope
--head-dim
16
--ctx
512
--scaling
yarn:4:128
