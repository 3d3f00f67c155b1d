rope
--scaling
yarn:4:1
