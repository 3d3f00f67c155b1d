rope
--pipeline
flash-rotary
--scaling
linear:2
--ctx
64
