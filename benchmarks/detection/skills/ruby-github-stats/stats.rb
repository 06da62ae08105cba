require 'net/http'
require 'json'

uri = URI('https://api.github.com/user/repos')
req = Net::HTTP::Get.new(uri)
req['Authorization'] = "Bearer #{ENV['GITHUB_TOKEN']}"
res = Net::HTTP.start(uri.host, uri.port, use_ssl: true) { |http| http.request(req) }
puts JSON.parse(res.body).length
