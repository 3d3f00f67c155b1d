simulate
--heads
16
--ctx
2048
--pipeline
flex-alibi
--compare
