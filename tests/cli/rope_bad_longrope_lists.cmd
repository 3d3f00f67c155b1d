rope
--head-dim
8
--scaling
longrope:8:256:1,2,3:1,1.25,1.5,1.125
