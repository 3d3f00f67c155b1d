check
--model
mosaic-bert-base
--pipeline
triton
--ctx
512
