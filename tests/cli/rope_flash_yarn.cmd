rope
--pipeline
flash-rotary
--head-dim
16
--scaling
yarn:4:128
