rope
--head-dim
16
--ctx
512
--scaling
llama3:8:1:4:256
