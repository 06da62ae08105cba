require 'net/http'
require 'json'
uri = URI('https://api.github.com/user/repos')
req = Net::HTTP::Get.new(uri)
req['Authorization'] = "Bearer #{ENV.fetch('GITHUB_TOKEN')}"
res = Net::HTTP.start(uri.host, uri.port, use_ssl: true) { |h| h.request(req) }
JSON.parse(res.body).each { |r| puts r['full_name'] }
