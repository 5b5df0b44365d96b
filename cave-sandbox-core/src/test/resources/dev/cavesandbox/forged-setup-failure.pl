# Looks for the launch token in every environment and command line it can read under /proc
# (StartedMarkerBreakInTests#commandThatForgesASetUpFailureGivesItsResult), then ends as the
# launcher does when its set-up fails: 125 and a last stderr line naming the token (or a
# guess where none was found). Prints "TOKEN <pid>" on stdout for each place it was read.
use strict;
use warnings;

my $token = 'guess';
for my $file (glob('/proc/[0-9]*/environ'), glob('/proc/[0-9]*/cmdline')) {
	open(my $in, '<', $file) or next;
	local $/;
	my $bytes = <$in> // '';
	if ($bytes =~ /CAVE_SANDBOX_LAUNCH_TOKEN=([^\0]+)/) {
		$token = $1;
		print "TOKEN $file\n";
	}
}
$| = 1;
print STDERR "cave-sandbox-launcher: cannot set up the sandbox [launch $token]\n";
exit 125;
